package dev.kanuki.redis;

import dev.kanuki.Capabilities;
import dev.kanuki.LeaseKind;
import dev.kanuki.LockBackendException;
import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.ChangeSubscription;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.KeyScanCursor;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScanArgs;
import io.lettuce.core.ScanCursor;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Redis locks. A lock is one key, {@code kanuki:{DIGEST}:lock}, set with {@code SET NX PX} to an
 * owner record (owner id, host, pid, acquisition time, name); the same script increments the
 * name's fence counter, so an acquisition is one round trip. Release deletes the key only while it
 * still holds our record and publishes on the name's channel, which wakes waiters of every JVM
 * through one shared pub/sub connection per backend. Renewal is a compare-and-{@code PEXPIRE}; the
 * engine's watchdog renews the ttl lease. Scripts run with {@code EVALSHA}, falling back to
 * {@code EVAL} (which loads them again) when the server answers {@code NOSCRIPT}, as after a
 * restart.
 */
final class RedisLockBackend implements dev.kanuki.spi.LockBackend {
    private static final Logger LOG = LoggerFactory.getLogger(RedisLockBackend.class);
    private static final Capabilities CAPABILITIES = Capabilities.builder(LeaseKind.TTL)
            .crossProcess().persistentFencing().ownerRecords().build();

    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> redis;
    private final String scope;
    private final Script acquire;
    private final Script release;
    private final Script renew;
    private final Object pubSubLock = new Object();
    private final Map<String, List<Runnable>> listeners = new ConcurrentHashMap<>();
    private StatefulRedisPubSubConnection<String, String> pubSub;

    RedisLockBackend(RedisURI uri, String scope, Duration timeout, java.io.File trusted) {
        this.scope = scope;
        this.client = RedisClient.create(uri);
        ClientOptions.Builder options = ClientOptions.builder();
        if (trusted != null) {
            options.sslOptions(io.lettuce.core.SslOptions.builder().jdkSslProvider().trustManager(trusted).build());
        }
        client.setOptions(options
                .disconnectedBehavior(ClientOptions.DisconnectedBehavior.REJECT_COMMANDS)
                .build());
        try {
            this.connection = client.connect();
        } catch (RuntimeException e) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
            throw e;
        }
        this.redis = connection.sync();
        this.acquire = new Script(Scripts.ACQUIRE);
        this.release = new Script(Scripts.RELEASE);
        this.renew = new Script(Scripts.RENEW);
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
        if (request.mode() != LockMode.EXCLUSIVE) {
            throw new UnsupportedOperationException("redis: only exclusive locks so far");
        }
        RedisKeys keys = RedisKeys.of(request.name());
        OwnerInfo owner = request.owner();
        String value = encode(owner, request.name());
        List<Object> result = acquire.run(ScriptOutputType.MULTI, new String[] {keys.lock(), keys.fence()},
                value, Long.toString(Math.max(1, request.lease().toMillis())));
        if (((Number) result.get(0)).longValue() == 1) {
            return Optional.of(new RedisGrant(keys, value, ((Number) result.get(1)).longValue()));
        }
        return Optional.empty();
    }

    @Override
    public void release(Grant grant) {
        RedisGrant g = (RedisGrant) grant;
        try {
            release.run(ScriptOutputType.INTEGER, new String[] {g.keys.lock()}, g.value, g.keys.channel());
        } catch (LockBackendException e) {
            // the key expires with its lease; waiters retry on their timer
            LOG.warn("cannot release a Redis lock ({}); it is freed when its lease runs out", e.getMessage());
        }
    }

    @Override
    public boolean renew(Grant grant, Duration lease) {
        RedisGrant g = (RedisGrant) grant;
        Long renewed = renew.run(ScriptOutputType.INTEGER, new String[] {g.keys.lock()}, g.value,
                Long.toString(Math.max(1, lease.toMillis())));
        return renewed != null && renewed == 1;
    }

    @Override
    public boolean verify(Grant grant) {
        RedisGrant g = (RedisGrant) grant;
        return g.value.equals(call(() -> redis.get(g.keys.lock())));
    }

    @Override
    public ChangeSubscription watchChanges(LockRequest request, Runnable onChange) {
        String channel = RedisKeys.of(request.name()).channel();
        synchronized (pubSubLock) {
            if (pubSub == null) {
                pubSub = call(client::connectPubSub);
                pubSub.addListener(new RedisPubSubAdapter<>() {
                    @Override
                    public void message(String ch, String message) {
                        List<Runnable> rs = listeners.get(ch);
                        if (rs != null) {
                            rs.forEach(Runnable::run);
                        }
                    }
                });
            }
            List<Runnable> rs = listeners.computeIfAbsent(channel, c -> new CopyOnWriteArrayList<>());
            rs.add(onChange);
            if (rs.size() == 1) {
                StatefulRedisPubSubConnection<String, String> ps = pubSub;
                call(() -> {
                    ps.sync().subscribe(channel);
                    return null;
                });
            }
        }
        AtomicBoolean cancelled = new AtomicBoolean();
        return () -> {
            if (!cancelled.compareAndSet(false, true)) {
                return;
            }
            synchronized (pubSubLock) {
                List<Runnable> rs = listeners.get(channel);
                if (rs == null) {
                    return;
                }
                rs.remove(onChange);
                if (rs.isEmpty()) {
                    listeners.remove(channel);
                    if (pubSub != null) {
                        pubSub.async().unsubscribe(channel); // not awaited: cancel must be quick
                    }
                }
            }
        };
    }

    @Override
    public LockStatus status(String name) {
        RedisKeys keys = RedisKeys.of(name);
        String value = call(() -> redis.get(keys.lock()));
        Long pttl = value == null ? null : call(() -> redis.pttl(keys.lock()));
        String fence = call(() -> redis.get(keys.fence()));
        long token = fence == null ? -1 : Long.parseLong(fence);
        return statusOf(name, value, pttl, token);
    }

    @Override
    public List<LockStatus> list() {
        List<LockStatus> out = new ArrayList<>();
        ScanCursor cursor = ScanCursor.INITIAL;
        ScanArgs args = ScanArgs.Builder.matches(RedisKeys.PREFIX + "*" + RedisKeys.LOCK_SUFFIX).limit(500);
        do {
            ScanCursor at = cursor;
            KeyScanCursor<String> page = call(() -> redis.scan(at, args));
            for (String key : page.getKeys()) {
                String value = call(() -> redis.get(key));
                if (value == null) {
                    continue;
                }
                String name = decodeName(value);
                if (name != null) {
                    out.add(status(name));
                }
            }
            cursor = page;
        } while (!cursor.isFinished());
        return out;
    }

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
        RedisKeys keys = RedisKeys.of(name);
        call(() -> {
            redis.del(keys.lock());
            redis.publish(keys.channel(), "1");
            return null;
        });
        return before;
    }

    @Override
    public void close() {
        synchronized (pubSubLock) {
            if (pubSub != null) {
                pubSub.close();
            }
        }
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
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

    private static LockStatus statusOf(String name, String value, Long pttl, long token) {
        if (value == null) {
            return new LockStatus(name, LockStatus.State.FREE, Optional.empty(), token);
        }
        String[] f = value.split("\t", 5);
        Optional<OwnerInfo> owner = Optional.empty();
        if (f.length == 5) {
            try {
                Instant until = pttl != null && pttl > 0 ? Instant.now().plusMillis(pttl) : null;
                owner = Optional.of(new OwnerInfo(f[1], Long.parseLong(f[2]), f[0],
                        Instant.ofEpochMilli(Long.parseLong(f[3])), until));
            } catch (RuntimeException e) {
                owner = Optional.empty(); // a foreign value: report the lock held by someone unknown
            }
        }
        return new LockStatus(name, LockStatus.State.HELD, owner, token);
    }

    // ------------------------------------------------------------------ calls

    private <T> T call(java.util.function.Supplier<T> command) {
        try {
            return command.get();
        } catch (RedisException e) {
            throw new LockBackendException("Redis at " + scope + " failed: " + e.getMessage(),
                    "check that the Redis server runs and is reachable", e);
        }
    }

    /** A script run by its SHA-1, loaded again with EVAL when the server lost it (NOSCRIPT). */
    private final class Script {
        private final String source;
        private final String sha;

        Script(String source) {
            this.source = source;
            this.sha = sha1(source);
        }

        <T> T run(ScriptOutputType type, String[] keys, String... args) {
            try {
                return redis.evalsha(sha, type, keys, args);
            } catch (RedisException e) {
                if (!String.valueOf(e.getMessage()).startsWith("NOSCRIPT")) {
                    throw new LockBackendException("Redis at " + scope + " failed: " + e.getMessage(),
                            "check that the Redis server runs and is reachable", e);
                }
            }
            return call(() -> redis.eval(source, type, keys, args));
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

    /** One acquisition: the keys, the exact value we stored, the fencing token. */
    private static final class RedisGrant implements Grant {
        final RedisKeys keys;
        final String value;
        final long token;

        RedisGrant(RedisKeys keys, String value, long token) {
            this.keys = keys;
            this.value = value;
            this.token = token;
        }

        @Override
        public long fencingToken() {
            return token;
        }

        @Override
        public OptionalLong issuedToken() {
            return OptionalLong.of(token);
        }
    }
}
