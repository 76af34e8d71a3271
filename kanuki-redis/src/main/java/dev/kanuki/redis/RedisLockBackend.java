package dev.kanuki.redis;

import dev.kanuki.Capabilities;
import dev.kanuki.LeaseKind;
import dev.kanuki.LockBackendException;
import dev.kanuki.LockLostException;
import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.ChangeSubscription;
import dev.kanuki.spi.Durations;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.NameHints;
import dev.kanuki.spi.ProcessIdentity;
import dev.kanuki.spi.TokenOnDemandGrant;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.codec.StringCodec;
import io.lettuce.core.masterreplica.MasterReplica;
import io.lettuce.core.resource.ClientResources;
import io.lettuce.core.resource.DefaultClientResources;
import io.lettuce.core.resource.DefaultEventLoopGroupProvider;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Redis locks. An exclusive lock is one key, {@code kanuki:{DIGEST}:lock}, set with a lease to an
 * owner record (owner id, host, pid, acquisition time, name); readers of a shared lock and holders
 * of semaphore permits are members of a sorted set scored by their lease's end ({@link Scripts}).
 * An acquisition is one round trip: a bare {@code SET NX PX} for an exclusive lock whose token is
 * issued on demand, else one script that also takes the token; when the lock is busy the script
 * tells the engine how long the holder's lease still runs ({@link LockRequest#retryAfter}). Release removes only our own record; an exclusive release then
 * hands the lock to the first waiter in the name's line in the same script and tells that
 * waiter's backend on its inbox channel, so the waiter holds the lock without a round trip of its
 * own (first come, first served across JVMs). Other releases, and one with nobody in line,
 * publish on the name's channel, which wakes waiters of every JVM through one shared pub/sub
 * connection per backend. Renewal compares the owner and extends the lease; the engine's watchdog renews it.
 * Scripts run with {@code EVALSHA}, falling back to {@code EVAL} (which loads them again) when
 * the server answers {@code NOSCRIPT}, as after a restart.
 *
 * <p>Hazard: with replicas (Sentinel), replication is asynchronous; a lock written just before a
 * failover may be missing on the promoted replica, and a short lease may run out there before the
 * holder's client follows the failover: two holders for a few seconds. Tokens still rise (the
 * counter never falls below the server clock in microseconds), so fencing catches the older one.
 */
final class RedisLockBackend implements dev.kanuki.spi.LockBackend {
    private static final Logger LOG = LoggerFactory.getLogger(RedisLockBackend.class);
    private static final Capabilities CAPABILITIES = Capabilities.builder(LeaseKind.TTL)
            .crossProcess().sharedLocks().semaphores().persistentFencing().ownerRecords().build();

    private final RedisClient client;
    private final ClientResources resources;
    private final StatefulRedisConnection<String, String> connection;
    /** Each command's bound (the URI's {@code timeout}); an acquisition's is cut to its caller's deadline. */
    private final Duration timeout;
    private final RedisCommands<String, String> redis;
    private final String scope;
    private final Script acquire;
    private final Script token;
    private final Script setWithToken;
    private final Script release;
    private final Script renew;
    private final Script verifyMember;
    private final Script dropIntent;
    private final Script leaveLine;
    private final Script statusScript;
    /** Writers that left an intent key while waiting for readers: dropped when they give up. */
    private final Set<LockRequest> intents = ConcurrentHashMap.newKeySet();
    /**
     * The pub/sub connection, with this backend's inbox: waiters take a place in the server's line
     * only once the inbox is subscribed, since a hand-over that reaches no subscriber is taken back.
     */
    private final PubSubChannels channels;
    /** Our exclusive requests that took a place in a server's line, by waiter id, until they give up or release. */
    private final Map<String, InLine> inLine = new ConcurrentHashMap<>();
    /** How many names each memory below keeps before it starts again: they are hints only. */
    static final int NAMES_REMEMBERED = 4096;
    /** The keys of the names in use: the SHA-256 and the key strings behind them are per-call work otherwise. */
    private final Map<String, RedisKeys> keysByName = new ConcurrentHashMap<>();
    /** Names whose last holder here asked for a fencing token, and names found held recently (their attempts go straight to the script). */
    private final NameHints hints = new NameHints(NAMES_REMEMBERED);
    /** How long a fence counter is kept after the clock passed its last token (URI option {@code fenceMargin}). */
    private final long fenceMarginMillis;
    private final SetArgs setNxArgsDefault = SetArgs.Builder.nx().px(30_000);

    RedisLockBackend(RedisURI uri, String scope, Duration timeout, java.io.File trusted, Duration fenceMargin) {
        this.scope = scope;
        this.fenceMarginMillis = fenceMargin.toMillis();
        this.timeout = timeout;
        // One I/O thread for both connections: a hand-over arrives on the pub/sub connection, and
        // the holder's next command (often the release) then goes out through the thread that just
        // ran, not one that has slept since the last command; it also keeps a provider's threads few.
        this.resources = DefaultClientResources.builder().eventLoopGroupProvider(new DefaultEventLoopGroupProvider(1))
                .build();
        this.client = RedisClient.create(resources, uri);
        ClientOptions.Builder options = ClientOptions.builder();
        if (trusted != null) {
            options.sslOptions(io.lettuce.core.SslOptions.builder().jdkSslProvider().trustManager(trusted).build());
        }
        client.setOptions(options
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .build());
        try {
            // Through Sentinel: a master-replica connection, which follows the sentinels' +switch-master
            // (Lettuce refreshes about 5 s after it). A plain connection would keep writing to a demoted
            // primary until the sentinels convert it to a replica, some 10 s later, while the lease runs
            // out on the new primary.
            this.connection = uri.getSentinels().isEmpty() ? client.connect()
                    : MasterReplica.connect(client, StringCodec.UTF8, uri);
        } catch (RuntimeException e) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
            resources.shutdown(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(2000);
            throw e;
        }
        this.redis = connection.sync();
        this.acquire = new Script(Scripts.ACQUIRE);
        this.token = new Script(Scripts.TOKEN);
        this.setWithToken = new Script(Scripts.SET_WITH_TOKEN);
        this.release = new Script(Scripts.RELEASE);
        this.renew = new Script(Scripts.RENEW);
        this.verifyMember = new Script(Scripts.VERIFY_MEMBER);
        this.dropIntent = new Script(Scripts.DROP_INTENT);
        this.leaveLine = new Script(Scripts.LEAVE_LINE);
        this.channels = new PubSubChannels(client, scope, "kanuki:inbox:" + ProcessIdentity.randomId(), this::handedOver);
        this.statusScript = new Script(Scripts.STATUS);
    }

    @Override
    public Capabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public String scope() {
        return scope;
    }

    @Override
    public Optional<Grant> tryAcquire(LockRequest request) {
        RedisKeys keys = keysOf(request.name());
        String value = encode(request.owner(), request.name());
        long lease = Math.max(1, request.lease().toMillis());
        boolean fence = request.mode() != LockMode.EXCLUSIVE || hints.isFenced(request.name());
        boolean exclusive = request.mode() == LockMode.EXCLUSIVE;
        String id = exclusive ? request.owner().id() : null;
        if (exclusive) {
            InLine line = inLine.get(id);
            long handed = line == null ? -1 : line.takeHandedOver();
            if (handed >= 0) {
                // a release handed us the lock (its message came on our inbox): no round trip
                return Optional.of(new RedisGrant(keys, LockMode.EXCLUSIVE, value, request.name(), handed > 0, handed,
                        id));
            }
            long quiet = line == null ? -1 : line.takeQuiet(channels);
            if (quiet > 0) {
                // the engine's attempt right after subscribing: our last attempt found the lock held
                // with the channel already subscribed, and nothing was published on it since
                request.retryAfter(Duration.ofNanos(quiet));
                return Optional.empty();
            }
        }
        if (exclusive && !hints.isContended(request.name(), System.nanoTime()) && !intents.contains(request)) {
            // SET NX PX, bare or with the token: fails while anyone holds the name, readers included
            // (their mark)
            if (fence) {
                Long n = setWithToken.runWithin(request.callTimeout(timeout), ScriptOutputType.INTEGER,
                        new String[] {keys.lock(), keys.fence()}, value, Long.toString(lease));
                if (n != null && n >= 0) {
                    return Optional.of(new RedisGrant(keys, LockMode.EXCLUSIVE, value, request.name(), true, n,
                            holdIfInLine(id)));
                }
            } else if ("OK".equals(within(request.callTimeout(timeout),
                    connection.async().set(keys.lock(), value, setNxArgs(lease))))) {
                return Optional.of(new RedisGrant(keys, LockMode.EXCLUSIVE, value, request.name(), false, 0,
                        holdIfInLine(id)));
            }
            hints.contended(request.name(), System.nanoTime());
            // held: the script tells how long the lease runs, leaves a writer's intent where readers
            // are in, and takes the lock if it was freed in between
        }
        // a waiter takes a place in the name's line (a try without waiting does not)
        boolean waits = exclusive && channels.inboxOpen() && !request.timeLeft().isZero();
        PubSubChannels.Mark mark = waits ? channels.mark(keys.channel()) : null;
        long sent = System.nanoTime();
        InLine line = waits ? inLine.computeIfAbsent(id, k -> new InLine()) : null;
        String entry = line == null ? "" : line.entry(() -> channels.inbox() + "\t" + id + "\t" + lease + "\t"
                + (fence ? "1" : "0") + "\t" + value);
        List<Object> result = acquire.runWithin(request.callTimeout(timeout), ScriptOutputType.MULTI, keys.forAcquire(),
                code(request.mode()), value,
                Long.toString(lease), Integer.toString(request.permits()), fence ? "1" : "0", entry);
        long answer = ((Number) result.get(1)).longValue();
        if (((Number) result.get(0)).longValue() == 1) {
            intents.remove(request);
            return Optional.of(new RedisGrant(keys, request.mode(), value, request.name(), fence, answer,
                    exclusive ? holdIfInLine(id) : null));
        }
        hints.contended(request.name(), System.nanoTime());
        if (result.size() > 2) {
            intents.add(request); // it left an intent key: drop it if it gives up
        }
        if (line != null && mark != null && answer > 0) {
            line.quietFrom(mark, sent + TimeUnit.MILLISECONDS.toNanos(answer));
        }
        // how long the holder's lease still runs (-1: a key without expiry, no hint)
        request.retryAfter(Duration.ofMillis(answer));
        return Optional.empty();
    }

    /** {@return {@code id} when that request is in a line (from now on holding), else null} */
    private String holdIfInLine(String id) {
        InLine line = inLine.get(id);
        if (line == null) {
            return null;
        }
        line.hold();
        return id;
    }

    /**
     * A release handed one of our waiters the lock: its message on our inbox, {@code token TAB id
     * TAB value}. Wakes the waiter, whose next attempt takes the grant without a round trip. A
     * hand-over to a request that no longer waits (it gave up while the message was on its way)
     * is passed on at once, without waiting for its reply.
     */
    private void handedOver(String message) {
        String[] f = message.split("\t", 3);
        if (f.length != 3) {
            return;
        }
        InLine line = inLine.get(f[1]);
        if (line == null) {
            passOn(f[2]);
            return;
        }
        Runnable wake = line.handedOver(Long.parseLong(f[0]));
        if (wake != null) {
            wake.run();
        }
    }

    /** Releases, asynchronously (we are on the client's event loop), a lock handed to nobody waiting here. */
    private void passOn(String value) {
        String name = decodeName(value);
        if (name == null) {
            return;
        }
        RedisKeys keys = keysOf(name);
        release.runAsync(keys.forHandOver(), "x", value, keys.channel()).whenComplete((r, e) -> {
            if (e != null) {
                LOG.debug("cannot pass on a lock handed to a request that gave up ({}); it is freed when its lease"
                        + " runs out", e.getMessage());
            }
        });
    }

    private SetArgs setNxArgs(long leaseMillis) {
        return leaseMillis == 30_000 ? setNxArgsDefault : SetArgs.Builder.nx().px(leaseMillis);
    }

    /** {@return the name's keys, remembered for the names in use (forgotten all at once past a bound)} */
    private RedisKeys keysOf(String name) {
        RedisKeys keys = keysByName.get(name);
        if (keys == null) {
            if (keysByName.size() >= NAMES_REMEMBERED) {
                keysByName.clear();
            }
            keys = RedisKeys.of(name);
            keysByName.put(name, keys);
        }
        return keys;
    }

    /** The token of an exclusive grant acquired without one: see {@link RedisGrant#fencingToken()}. */
    private long issueToken(RedisGrant g) {
        Long n = token.run(ScriptOutputType.INTEGER, new String[] {g.keys.lock(), g.keys.fence()}, g.value);
        if (n == null || n < 0) {
            throw new LockLostException(g.name, "the lock's key no longer holds this holder's record (its lease ran"
                    + " out, or it was broken); no fencing token was issued", null);
        }
        hints.fenced(g.name, true); // its holders use fencing: issue with the acquisition from now on
        return n;
    }

    @Override
    public void abandon(LockRequest request) {
        InLine line = request.mode() == LockMode.EXCLUSIVE ? inLine.remove(request.owner().id()) : null;
        String entry = line == null ? null : line.entry();
        if (entry != null) {
            // leave the line; a lock handed over meanwhile goes on to the next in line
            RedisKeys keys = keysOf(request.name());
            try {
                leaveLine.run(ScriptOutputType.INTEGER, keys.forHandOver(), entry,
                        encode(request.owner(), request.name()), keys.channel());
            } catch (LockBackendException e) {
                LOG.debug("cannot leave the line of '{}' ({}); the place lapses, and a lock handed to it is passed"
                        + " on or runs out", request.name(), e.getMessage());
            }
        }
        if (intents.remove(request)) {
            RedisKeys keys = keysOf(request.name());
            try {
                dropIntent.run(ScriptOutputType.INTEGER, new String[] {keys.intent()},
                        encode(request.owner(), request.name()), keys.channel());
            } catch (LockBackendException e) {
                LOG.debug("cannot drop a writer's intent ({}); it expires with its lease", e.getMessage());
            }
        }
    }

    @Override
    public void release(Grant grant) {
        RedisGrant g = (RedisGrant) grant;
        boolean unusedEagerToken;
        g.stateLock().lock();
        try {
            if (g.isReleased()) {
                return;
            }
            g.markReleased();
            unusedEagerToken = g.issuedEagerly() && !g.tokenAsked();
        } finally {
            g.stateLock().unlock();
        }
        if (g.mode == LockMode.EXCLUSIVE && unusedEagerToken) {
            hints.fenced(g.name, false); // this holder did not use it: back to tokens on demand
        }
        try {
            release.run(ScriptOutputType.INTEGER, g.mode == LockMode.EXCLUSIVE ? g.keys.forHandOver() : g.scriptKeys(),
                    code(g.mode), g.value, g.keys.channel(g.mode));
        } catch (LockBackendException e) {
            // the key expires with its lease; waiters retry on their timer
            LOG.warn("cannot release a Redis lock ({}); it is freed when its lease runs out", e.getMessage());
        } finally {
            if (g.lineId != null) {
                inLine.remove(g.lineId);
            }
        }
    }

    @Override
    public boolean renew(Grant grant, Duration lease) {
        RedisGrant g = (RedisGrant) grant;
        Long renewed = renew.run(ScriptOutputType.INTEGER, g.scriptKeys(), code(g.mode), g.value,
                Long.toString(Math.max(1, lease.toMillis())));
        return renewed != null && renewed == 1;
    }

    @Override
    public boolean verify(Grant grant) {
        RedisGrant g = (RedisGrant) grant;
        if (g.mode == LockMode.EXCLUSIVE) {
            return g.value.equals(call(() -> redis.get(g.keys.lock())));
        }
        Long held = verifyMember.run(ScriptOutputType.INTEGER, new String[] {g.keys.holderKey(g.mode)}, g.value);
        return held != null && held == 1;
    }

    private static String code(LockMode mode) {
        return switch (mode) {
            case EXCLUSIVE -> "x";
            case SHARED -> "s";
            case PERMIT -> "p";
        };
    }

    @Override
    public ChangeSubscription watchChanges(LockRequest request, Runnable onChange) {
        ChangeSubscription watch = channels.watch(keysOf(request.name()).channel(request.mode()), onChange);
        if (request.mode() != LockMode.EXCLUSIVE) {
            return watch;
        }
        // and the hand-over on the inbox (subscribed with the first watch)
        InLine line = inLine.computeIfAbsent(request.owner().id(), k -> new InLine());
        line.wakeWith(onChange);
        return () -> {
            line.wakeWith(null);
            watch.cancel();
        };
    }

    /**
     * Refuses, saying why nothing stays: every key of a lock expires with its lease (or its
     * waiters' places), and a name's fence counter expires {@code fenceMargin} after the server
     * clock passed its last token (see {@link Scripts}).
     */
    @Override
    public List<String> prune(boolean dryRun) {
        throw new UnsupportedOperationException("redis: nothing to prune: a lock's keys expire with its lease, and a "
                + "name's fence counter " + Durations.format(Duration.ofMillis(fenceMarginMillis))
                + " (fenceMargin) after the server clock passed its last token");
    }

    /**
     * The exclusive holder ({@code HELD}), else the readers ({@code HELD_SHARED}, naming the one
     * whose lease runs longest), else {@code FREE}. Semaphore permits are a separate namespace
     * (as in the engine) and not reported here.
     */
    @Override
    public LockStatus status(String name) {
        RedisKeys keys = keysOf(name);
        List<Object> r = statusScript.run(ScriptOutputType.MULTI, new String[] {keys.lock(), keys.fence(), keys.shared()});
        long token = r.get(5) == null ? -1 : Long.parseLong((String) r.get(5));
        if (r.get(0) != null) {
            return new LockStatus(name, LockStatus.State.HELD, ownerOf((String) r.get(0), (Long) r.get(1)), token);
        }
        if (r.get(2) != null) {
            return new LockStatus(name, LockStatus.State.HELD_SHARED, ownerOf((String) r.get(2), (Long) r.get(3)), token);
        }
        return new LockStatus(name, LockStatus.State.FREE, Optional.empty(), token);
    }

    /** Every name with an exclusive holder or readers: the lock keys and the reader sets. */
    @Override
    public List<LockStatus> list() {
        Map<String, LockStatus> out = new java.util.LinkedHashMap<>();
        scan(RedisKeys.LOCK_SUFFIX, key -> call(() -> redis.get(key)), out);
        scan(RedisKeys.SHARED_SUFFIX, key -> {
            List<String> first = call(() -> redis.zrange(key, 0, 0));
            return first.isEmpty() ? null : first.get(0);
        }, out);
        return new ArrayList<>(out.values());
    }

    private void scan(String suffix, java.util.function.Function<String, String> valueOf, Map<String, LockStatus> out) {
        ScanCursor cursor = ScanCursor.INITIAL;
        ScanArgs args = ScanArgs.Builder.matches(RedisKeys.PREFIX + "*" + suffix).limit(500);
        do {
            ScanCursor at = cursor;
            KeyScanCursor<String> page = call(() -> redis.scan(at, args));
            for (String key : page.getKeys()) {
                String value = valueOf.apply(key);
                String name = value == null ? null : decodeName(value);
                if (name != null && !out.containsKey(name)) {
                    LockStatus status = status(name);
                    if (status.isHeld()) {
                        out.put(name, status);
                    }
                }
            }
            cursor = page;
        } while (!cursor.isFinished());
    }

    /** Removes the exclusive holder, every reader and a waiting writer's intent; then wakes waiters. */
    @Override
    public LockStatus breakLock(String name, boolean force) {
        LockStatus before = status(name);
        if (before.state() == LockStatus.State.FREE) {
            return before;
        }
        if (!force) {
            throw new IllegalStateException("lock '" + name + "' is held by "
                    + before.owner().map(OwnerInfo::describe).orElse("an unknown owner")
                    + " whose lease is running; it is freed when the lease runs out, or break it with force");
        }
        RedisKeys keys = keysOf(name);
        call(() -> {
            redis.del(keys.lock(), keys.shared(), keys.intent());
            redis.publish(keys.channel(), "1");
            return null;
        });
        return before;
    }

    /** The store's spool for parking locks: keys beside each name's lock keys ({@link RedisSpool}). */
    @Override
    public dev.kanuki.spi.WorkSpool spool() {
        return new RedisSpool(redis, scope);
    }

    @Override
    public void close() {
        channels.close();
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
        resources.shutdown(0, 2, TimeUnit.SECONDS).awaitUninterruptibly(3000); // its threads end before close returns
    }

    // ------------------------------------------------------------------ owner record

    static String encode(OwnerInfo owner, String name) {
        return owner.id() + "\t" + owner.host() + "\t" + owner.pid() + "\t" + owner.acquiredAt().toEpochMilli()
                + "\t" + name;
    }

    private static String decodeName(String value) {
        String[] f = value.split("\t", 5);
        return f.length == 5 ? f[4] : null;
    }

    /** {@return the owner in a stored value whose lease has {@code pttl} ms left; empty for a foreign value} */
    private static Optional<OwnerInfo> ownerOf(String value, Long pttl) {
        String[] f = value.split("\t", 5);
        if (f.length != 5) {
            return Optional.empty();
        }
        try {
            Instant until = pttl != null && pttl > 0 ? Instant.now().plusMillis(pttl) : null;
            return Optional.of(new OwnerInfo(f[1], Long.parseLong(f[2]), f[0],
                    Instant.ofEpochMilli(Long.parseLong(f[3])), until));
        } catch (RuntimeException e) {
            return Optional.empty(); // a foreign value: report the lock held by someone unknown
        }
    }

    // ------------------------------------------------------------------ calls

    private <T> T call(java.util.function.Supplier<T> command) {
        try {
            return command.get();
        } catch (RedisException e) {
            throw failed(scope, e);
        }
    }

    /**
     * Waits for a command at most {@code limit}: an acquisition passes what its caller's deadline
     * leaves ({@code LockRequest.callTimeout}), so that a server that stops answering fails it by
     * that deadline, not after the connection's own command timeout.
     */
    private <T> T within(Duration limit, java.util.concurrent.CompletionStage<T> command) {
        try {
            return command.toCompletableFuture().get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new LockBackendException("Redis at " + scope + " did not answer within " + limit.toMillis()
                    + "ms (acquiring)", "check that the Redis server runs and is reachable", e);
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause();
            throw failed(scope, cause instanceof RuntimeException r ? r : new RedisException(cause));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("interrupted while acquiring on Redis at " + scope, null, e);
        }
    }

    /** {@return the error for a failed command: it names the server and what to check} */
    static LockBackendException failed(String scope, RuntimeException e) {
        LockBackendException named = RedisErrors.recognised(scope, null, e); // e.g. NOAUTH after a restart
        if (named != null) {
            return named;
        }
        return new LockBackendException("Redis at " + scope + " failed: " + e.getMessage(),
                "check that the Redis server runs and is reachable", e);
    }

    /** A script run by its SHA-1, loaded again with EVAL when the server lost it (NOSCRIPT). */
    private final class Script {
        private final String source;
        private final String sha;

        Script(String source) {
            this.source = Scripts.withFenceMargin(source, fenceMarginMillis);
            this.sha = sha1(this.source);
        }

        <T> T run(ScriptOutputType type, String[] keys, String... args) {
            try {
                return redis.evalsha(sha, type, keys, args);
            } catch (RedisException e) {
                if (!String.valueOf(e.getMessage()).startsWith("NOSCRIPT")) {
                    throw failed(scope, e);
                }
            }
            return call(() -> redis.eval(source, type, keys, args));
        }

        /** Waits for the reply at most {@code limit} (see {@link #within}). */
        <T> T runWithin(Duration limit, ScriptOutputType type, String[] keys, String... args) {
            java.util.concurrent.CompletionStage<T> sent = connection.async().<T>evalsha(sha, type, keys, args)
                    .exceptionallyCompose(e -> String.valueOf(e.getMessage()).contains("NOSCRIPT")
                            ? connection.async().<T>eval(source, type, keys, args)
                            : java.util.concurrent.CompletableFuture.failedFuture(e));
            return within(limit, sent);
        }

        /** Without waiting for the reply; an integer script. */
        java.util.concurrent.CompletionStage<Long> runAsync(String[] keys, String... args) {
            return connection.async().<Long>evalsha(sha, ScriptOutputType.INTEGER, keys, args)
                    .exceptionallyCompose(e -> String.valueOf(e.getMessage()).contains("NOSCRIPT")
                            ? connection.async().<Long>eval(source, ScriptOutputType.INTEGER, keys, args)
                            : java.util.concurrent.CompletableFuture.failedFuture(e));
        }
    }

    /**
     * One exclusive request of ours in a server's line: the waker the engine gave, and the lock
     * once a release handed it over. Guarded by its monitor.
     */
    private static final class InLine {
        private String entry;
        private Runnable wake;
        private long handedToken = -1;
        private boolean holding;
        /** The channel as the last failed attempt began, and when that attempt's hint runs out; or null. */
        private PubSubChannels.Mark quietMark;
        private long hintEndsNanos;

        synchronized void quietFrom(PubSubChannels.Mark mark, long hintEnds) {
            quietMark = mark;
            hintEndsNanos = hintEnds;
        }

        /**
         * Once per failed attempt: when this request is watching, and nothing was published on the
         * channel since the last attempt began (so the lock is still held, or its lease ran out,
         * which the hint covers), how long of that attempt's hint is left.
         *
         * @return nanoseconds left of the hint, or 0 or less when an attempt must go to the server
         */
        synchronized long takeQuiet(PubSubChannels channels) {
            PubSubChannels.Mark mark = quietMark;
            quietMark = null;
            if (mark == null || wake == null || !channels.quietSince(mark)) {
                return 0;
            }
            return hintEndsNanos - System.nanoTime();
        }

        /**
         * @return the request's entry in the server's line, made on the first call: the same on
         *     every attempt, so that the line finds it (a later attempt would otherwise add another)
         */
        synchronized String entry(java.util.function.Supplier<String> make) {
            if (entry == null) {
                entry = make.get();
            }
            return entry;
        }

        /** {@return the entry, or null when the request never took a place in line} */
        synchronized String entry() {
            return entry;
        }

        synchronized void wakeWith(Runnable onChange) {
            wake = onChange;
        }

        /** {@return the waker to run, or null (none yet, or the request holds the lock already)} */
        synchronized Runnable handedOver(long token) {
            if (holding) {
                return null;
            }
            handedToken = token;
            return wake;
        }

        /** {@return the token handed over (0: none issued yet), or -1 when nothing was; from then on holding} */
        synchronized long takeHandedOver() {
            if (holding || handedToken < 0) {
                return -1;
            }
            holding = true;
            return handedToken;
        }

        synchronized void hold() {
            holding = true;
        }
    }

    private static String sha1(String s) {
        try {
            byte[] d = java.security.MessageDigest.getInstance("SHA-1").digest(s.getBytes(java.nio.charset.StandardCharsets.UTF_8));
            StringBuilder b = new StringBuilder();
            for (byte x : d) {
                b.append(String.format("%02x", x));
            }
            return b.toString();
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * One acquisition: the keys, the mode, the exact value we stored, the fencing token. An
     * exclusive grant taken by the bare {@code SET} has no token yet: the first
     * {@link #fencingToken()} issues it, under the grant's state lock, which release also takes, so
     * a token is never issued once the release has begun.
     */
    private final class RedisGrant extends TokenOnDemandGrant {
        final RedisKeys keys;
        final LockMode mode;
        final String value;
        final String name;
        /** The waiter id under which the request was in a line ({@link #inLine}), else null. */
        final String lineId;

        RedisGrant(RedisKeys keys, LockMode mode, String value, String name, boolean issuedEagerly, long token,
                String lineId) {
            super(issuedEagerly ? OptionalLong.of(token) : OptionalLong.empty());
            this.keys = keys;
            this.mode = mode;
            this.value = value;
            this.name = name;
            this.lineId = lineId;
        }

        /** {@return the keys the release and renew scripts take: the grant's key, and for a reader the lock key} */
        String[] scriptKeys() {
            return mode == LockMode.SHARED ? new String[] {keys.shared(), keys.lock()}
                    : new String[] {keys.holderKey(mode)};
        }

        @Override
        protected long issueToken() {
            return RedisLockBackend.this.issueToken(this);
        }

        @Override
        protected String lockName() {
            return name;
        }

        @Override
        protected String storeName() {
            return "Redis";
        }
    }
}
