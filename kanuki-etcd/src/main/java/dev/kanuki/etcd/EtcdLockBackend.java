package dev.kanuki.etcd;

import dev.kanuki.Capabilities;
import dev.kanuki.LeaseKind;
import dev.kanuki.LockBackendException;
import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.ChangeSubscription;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.SafeNames;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.ClientBuilder;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.Watch;
import io.etcd.jetcd.kv.GetResponse;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.LeaseOption;
import io.etcd.jetcd.options.PutOption;
import io.etcd.jetcd.options.WatchOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * etcd locks. A lock is one key, {@code PREFIX/lock/STEM}, created by a transaction
 * "if the key's create revision is 0 (it does not exist), put it with our lease, and read it back":
 * one round trip, atomic on the cluster. The key's create revision is the fencing token: etcd's
 * revision is one counter for the whole cluster, stored in its log, so it only grows, across
 * restarts and leader changes.
 *
 * <p>Every key of a provider is attached to one etcd lease, the provider's session
 * ({@link EtcdSession}): its TTL is the engine's lease, it is kept alive by the engine's renewals
 * (one keep-alive per third of the lease however many locks are held), and when this JVM dies or
 * stops answering for longer than the TTL, etcd revokes the lease and deletes every key on it.
 * Release deletes the key only while its create revision is still ours. Waiters are woken by a
 * watch on the key (the release's delete, or the lease's expiry, is an event), not by polling.
 */
final class EtcdLockBackend implements LockBackend {
    private static final Logger LOG = LoggerFactory.getLogger(EtcdLockBackend.class);
    private static final Capabilities CAPABILITIES = Capabilities.builder(LeaseKind.TTL)
            .crossProcess().persistentFencing().ownerRecords().build();

    private final Client client;
    private final KV kv;
    private final Watch watch;
    private final String keyPrefix;
    private final String scope;
    private final Duration timeout;
    private final EtcdSession.Holder sessions;
    /** Acquisitions sent but not answered in time, and whether the engine has given them up. */
    private final Map<LockRequest, Boolean> late = new ConcurrentHashMap<>();
    /**
     * The longest a release, or the revocation of the lease at close, waits for an answer before it
     * goes on in the background: a caller closing a handle without a quorum must not wait a
     * whole request timeout.
     */
    static final Duration CLOSE_WAIT = Duration.ofSeconds(1);
    /** How long one try to reach a member at open waits. */
    private static final Duration CONNECT_TRY = Duration.ofSeconds(1);
    /** The pause before an acquisition tries again after a member failed it in passing (an election, a reset). */
    private static final long TRANSIENT_RETRY_MILLIS = 100;
    /** A release retried soon at first (an election takes a second or two), later at most a second apart. */
    private static final long FIRST_RETRY_MILLIS = 200;
    private static final long MAX_RETRY_MILLIS = 1000;
    /** Keys whose release is still being retried: this provider's {@code status} calls them stale. */
    private final java.util.Set<ByteSequence> pendingReleases = ConcurrentHashMap.newKeySet();

    /**
     * Connects: waits, at most {@code timeout}, until a member answers a read it serves by itself
     * (no quorum needed), so that the gRPC client is loaded and connected before the first
     * acquisition, whose budget may be as short as a second. A refused connection on every
     * endpoint fails at once.
     */
    EtcdLockBackend(List<String> endpoints, String user, String password, String prefix, String scope, Duration timeout) {
        ClientBuilder builder = Client.builder().endpoints(endpoints.toArray(String[]::new)).connectTimeout(timeout)
                // jetcd's default waits for a server that may never come: a call on a channel that
                // cannot connect would wait out its caller's whole deadline, or forever. Fail it.
                .waitForReady(false)
                // jetcd's own retries of a failed call (another member after a reset): short, so
                // that kanuki's deadline, not a retry schedule of seconds, decides.
                .retryDelay(50).retryMaxDelay(250);
        if (user != null) {
            builder.user(bytes(user)).password(bytes(password == null ? "" : password));
        }
        this.client = builder.build();
        this.kv = client.getKVClient();
        this.watch = client.getWatchClient();
        this.keyPrefix = prefix + "/lock/";
        this.scope = scope;
        this.timeout = timeout;
        this.sessions = new EtcdSession.Holder(client.getLeaseClient(), this::await);
        try {
            connect();
        } catch (RuntimeException e) {
            client.close();
            throw e;
        }
    }

    /**
     * Waits until a member answers, at most {@code timeout}. One try waits at most a second: the
     * client spreads its calls over the endpoints, so the next try may reach a member that answers
     * sooner than one still starting up. A refused connection fails; no answer in time does not:
     * a new JVM on a loaded machine can take longer than that to load and start the gRPC client,
     * and every acquisition keeps its own deadline anyway (it tries again within it).
     */
    private void connect() {
        long until = System.nanoTime() + timeout.toNanos();
        GetOption local = GetOption.builder().withCountOnly(true).withSerializable(true).build();
        while (true) {
            long left = until - System.nanoTime();
            try {
                await(kv.get(bytes(keyPrefix), local), "connecting",
                        Duration.ofNanos(Math.max(1_000_000, Math.min(left, CONNECT_TRY.toNanos()))));
                return;
            } catch (LockBackendException e) {
                if (!(e.getCause() instanceof TimeoutException)) {
                    throw e;
                }
                if (until - System.nanoTime() <= 0) {
                    LOG.debug("etcd at {} has not answered within {}ms of opening; each call keeps its own deadline",
                            scope, timeout.toMillis());
                    return;
                }
            }
        }
    }

    @Override
    public Capabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public String scope() {
        return scope;
    }

    ByteSequence key(String name) {
        return bytes(keyPrefix + SafeNames.stem(name, "L"));
    }

    @Override
    public Optional<Grant> tryAcquire(LockRequest request) {
        if (request.mode() != LockMode.EXCLUSIVE) {
            throw new UnsupportedOperationException("etcd: only exclusive locks so far");
        }
        ByteSequence key = key(request.name());
        ByteSequence value = bytes(encode(request.owner(), request.name()));
        for (int attempt = 0; ; attempt++) {
            EtcdSession session;
            try {
                // the caller's deadline bounds every call
                session = sessions.current(request.lease(), request.callTimeout(timeout));
            } catch (LockBackendException e) {
                if (retryAfterPassingFailure(request, e)) {
                    continue;
                }
                throw e;
            }
            Duration budget = request.callTimeout(timeout); // what the lease's call left of the deadline
            TxnResponse r;
            CompletableFuture<TxnResponse> sent = kv.txn()
                    .If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                    .Then(Op.put(key, value, PutOption.builder().withLeaseId(session.id()).build()),
                            Op.get(key, GetOption.DEFAULT))
                    .Else(Op.get(key, GetOption.DEFAULT))
                    .commit();
            try {
                r = await(sent, "acquiring", budget);
            } catch (LockBackendException e) {
                if (!sent.isDone()) {
                    watchLateAnswer(request, key, sent);
                }
                if (attempt == 0 && EtcdSession.isLeaseGone(e)) {
                    session.markDead(); // expired between our check and the put: one more try on a new lease
                    continue;
                }
                if (retryAfterPassingFailure(request, e)) {
                    continue;
                }
                throw e;
            }
            List<KeyValue> kvs = r.getGetResponses().get(0).getKvs();
            if (kvs.isEmpty()) {
                return Optional.empty(); // deleted between the compare and the read: the engine tries again
            }
            KeyValue held = kvs.get(0);
            if (r.isSucceeded()) {
                return Optional.of(new EtcdGrant(key, held.getCreateRevision(), session));
            }
            if (held.getValue().equals(value)) {
                // An earlier attempt of this same acquisition was written after we stopped waiting for it.
                if (held.getLease() == session.id()) {
                    return Optional.of(new EtcdGrant(key, held.getCreateRevision(), session));
                }
                deleteIfRevision(key, held.getCreateRevision());
            }
            return Optional.empty();
        }
    }

    /**
     * Whether a failed call is worth another try within the caller's deadline, after a short
     * pause: a call that got no answer within the request timeout while the caller's deadline
     * runs longer, or that a member failed in passing (no leader during an election, a connection
     * reset; etcd answers both as {@code UNAVAILABLE}). Never a refused connection (nothing
     * listens: fail at once), nor when the deadline leaves no time for another try.
     */
    private boolean retryAfterPassingFailure(LockRequest request, LockBackendException e) {
        Throwable cause = e.getCause() == null ? e : e.getCause();
        boolean passing = cause instanceof TimeoutException
                || io.grpc.Status.fromThrowable(cause).getCode() == io.grpc.Status.Code.UNAVAILABLE;
        if (!passing || isRefused(e) || request.timeLeft().toMillis() <= TRANSIENT_RETRY_MILLIS) {
            return false;
        }
        LOG.debug("etcd at {} failed an acquisition in passing ({}); trying again within the caller's deadline", scope,
                e.getMessage());
        try {
            Thread.sleep(TRANSIENT_RETRY_MILLIS);
        } catch (InterruptedException interrupted) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("interrupted while acquiring on etcd at " + scope, null, interrupted);
        }
        return true;
    }

    /** {@return whether a failure's cause is a connection that nothing accepted} */
    static boolean isRefused(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.net.ConnectException || String.valueOf(t.getMessage()).contains("Connection refused")) {
                return true;
            }
        }
        return false;
    }

    /**
     * The engine gave up on this acquisition: an attempt whose answer we did not wait for may
     * still have written the key; remove it if it carries this acquisition's record.
     */
    @Override
    public void abandon(LockRequest request) {
        late.computeIfPresent(request, (r, abandoned) -> Boolean.TRUE);
        ByteSequence key = key(request.name());
        ByteSequence value = bytes(encode(request.owner(), request.name()));
        kv.txn().If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.value(value)))
                .Then(Op.delete(key, DeleteOption.DEFAULT)).commit()
                .whenComplete((r, e) -> {
                    if (e != null) {
                        LOG.debug("could not check for an abandoned etcd lock key: {}", e.toString());
                    }
                });
    }

    /**
     * An acquisition we stopped waiting for (a slow or paused server) may still be applied later.
     * If the engine has given up on the request by then, the key it wrote is deleted; if not, the
     * request's next attempt finds the key with its own record and takes it. (A delete sent by
     * {@link #abandon} alone is not enough: etcd may apply it before the late put.)
     */
    private void watchLateAnswer(LockRequest request, ByteSequence key, CompletableFuture<TxnResponse> sent) {
        late.putIfAbsent(request, Boolean.FALSE);
        sent.whenComplete((r, e) -> {
            Boolean abandoned = late.remove(request);
            if (r != null && r.isSucceeded() && Boolean.TRUE.equals(abandoned)) {
                long revision = r.getGetResponses().get(0).getKvs().get(0).getCreateRevision();
                deleteAsync(key, revision).whenComplete((d, f) -> {
                    if (f != null) {
                        LOG.warn("cannot remove the key of an abandoned etcd acquisition ({}); it goes with the"
                                + " provider's lease", f.toString());
                    }
                });
            }
        });
    }

    /**
     * Deletes the key while its create revision is the grant's: idempotent, and never another
     * holder's key (a create revision names one put). Waits at most the request timeout; a delete
     * without an answer by then (a leader election, an unreachable member) is sent again in the
     * background until it is answered ({@link #retryRelease}), and meanwhile this provider's
     * {@code status} calls the lock stale.
     */
    @Override
    public void release(Grant grant) {
        EtcdGrant g = (EtcdGrant) grant;
        try {
            deleteIfRevision(g.key, g.token);
        } catch (LockBackendException e) {
            // Given up, the key would stay as long as the provider's lease, which this JVM keeps
            // alive while it holds or takes other locks.
            LOG.warn("release of an etcd lock at {} not confirmed ({}); retrying in the background until it is"
                    + " answered or the provider's lease ends", scope, e.getMessage());
            pendingReleases.add(g.key);
            retryRelease(g, FIRST_RETRY_MILLIS);
        }
    }

    /**
     * Sends the release's delete again until etcd answers it (either answer is definite: deleted,
     * or the key is no longer at our create revision), the lease is known gone (its keys went with
     * it) or the provider closes (which revokes the lease). A delay that doubles up to a second.
     */
    private void retryRelease(EtcdGrant g, long delayMillis) {
        if (g.session.isDead() || sessions.isClosed()) {
            pendingReleases.remove(g.key);
            return;
        }
        CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(delayMillis, TimeUnit.MILLISECONDS))
                .thenCompose(x -> deleteAsync(g.key, g.token).orTimeout(timeout.toMillis(), TimeUnit.MILLISECONDS))
                .whenComplete((r, e) -> {
                    if (e == null) {
                        pendingReleases.remove(g.key);
                        LOG.debug("release of an etcd lock at {} confirmed", scope);
                    } else if (EtcdSession.isLeaseGone(e)) {
                        pendingReleases.remove(g.key);
                    } else {
                        retryRelease(g, Math.min(delayMillis * 2, MAX_RETRY_MILLIS));
                    }
                });
    }

    private void deleteIfRevision(ByteSequence key, long createRevision) {
        await(deleteAsync(key, createRevision), "releasing", CLOSE_WAIT.compareTo(timeout) < 0 ? CLOSE_WAIT : timeout);
    }

    private CompletableFuture<TxnResponse> deleteAsync(ByteSequence key, long createRevision) {
        return kv.txn().If(new Cmp(key, Cmp.Op.EQUAL, CmpTarget.createRevision(createRevision)))
                .Then(Op.delete(key, DeleteOption.DEFAULT)).commit();
    }

    /**
     * Keeps the session's lease alive (at most once per third of it, whatever the number of
     * locks) and checks that the key is still ours, both requests at once.
     */
    @Override
    public boolean renew(Grant grant, Duration lease) {
        EtcdGrant g = (EtcdGrant) grant;
        CompletableFuture<GetResponse> read = kv.get(g.key);
        if (!g.session.keepAliveIfDue(timeout)) {
            read.cancel(true);
            return false;
        }
        return isOurs(g, await(read, "renewing"));
    }

    @Override
    public boolean verify(Grant grant) {
        EtcdGrant g = (EtcdGrant) grant;
        if (g.session.isDead()) {
            return false;
        }
        return isOurs(g, await(kv.get(g.key), "verifying"));
    }

    private static boolean isOurs(EtcdGrant g, GetResponse read) {
        if (g.session.isDead() || read.getKvs().isEmpty()) {
            return false;
        }
        KeyValue kv = read.getKvs().get(0);
        return kv.getCreateRevision() == g.token && kv.getLease() == g.session.id();
    }

    @Override
    public ChangeSubscription watchChanges(LockRequest request, Runnable onChange) {
        Watch.Watcher watcher = watch.watch(key(request.name()), WatchOption.DEFAULT,
                Watch.listener(response -> onChange.run(), error -> onChange.run()));
        return watcher::close;
    }

    @Override
    public LockStatus status(String name) {
        GetResponse read = await(kv.get(key(name)), "reading status");
        if (read.getKvs().isEmpty()) {
            return new LockStatus(name, LockStatus.State.FREE, Optional.empty(), -1);
        }
        KeyValue held = read.getKvs().get(0);
        Instant until = null;
        if (held.getLease() != 0) {
            long ttl = await(client.getLeaseClient().timeToLive(held.getLease(), LeaseOption.DEFAULT), "reading status")
                    .getTTL();
            until = ttl > 0 ? Instant.now().plusSeconds(ttl) : null;
        }
        LockStatus status = statusOf(name, held, until);
        // released here, its delete not yet answered: the holder is gone and the key goes soon
        return pendingReleases.contains(key(name))
                ? new LockStatus(name, LockStatus.State.STALE, status.owner(), status.lastFencingToken()) : status;
    }

    @Override
    public List<LockStatus> list() {
        GetResponse all = await(kv.get(bytes(keyPrefix), GetOption.builder().isPrefix(true).build()), "listing");
        List<LockStatus> out = new ArrayList<>();
        for (KeyValue held : all.getKvs()) {
            String name = decodeName(held.getValue().toString(StandardCharsets.UTF_8));
            if (name != null) {
                out.add(statusOf(name, held, null));
            }
        }
        return out;
    }

    @Override
    public LockStatus breakLock(String name, boolean force) {
        LockStatus before = status(name);
        if (before.state() == LockStatus.State.FREE) {
            return before;
        }
        if (!force) {
            throw new IllegalStateException("lock '" + SafeNames.printable(name) + "' is held by "
                    + before.owner().map(OwnerInfo::describe).orElse("an unknown owner")
                    + " whose lease is kept alive; it is freed when that process ends or stops answering, or break it"
                    + " with force");
        }
        await(kv.delete(key(name)), "breaking");
        return before;
    }

    @Override
    public void close() {
        sessions.close(); // revokes the lease: any key still on it goes at once
        client.close();
    }

    // ------------------------------------------------------------------ values

    static String encode(OwnerInfo owner, String name) {
        return owner.id() + "\t" + owner.host() + "\t" + owner.pid() + "\t" + owner.acquiredAt().toEpochMilli()
                + "\t" + name;
    }

    private static String decodeName(String value) {
        String[] f = value.split("\t", 5);
        return f.length == 5 ? f[4] : null;
    }

    private static LockStatus statusOf(String name, KeyValue held, Instant until) {
        String[] f = held.getValue().toString(StandardCharsets.UTF_8).split("\t", 5);
        Optional<OwnerInfo> owner = Optional.empty();
        if (f.length == 5) {
            try {
                owner = Optional.of(new OwnerInfo(f[1], Long.parseLong(f[2]), f[0],
                        Instant.ofEpochMilli(Long.parseLong(f[3])), until));
            } catch (RuntimeException e) {
                owner = Optional.empty(); // a foreign value: held by someone unknown
            }
        }
        return new LockStatus(name, LockStatus.State.HELD, owner, held.getCreateRevision());
    }

    static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }

    // ------------------------------------------------------------------ calls

    /** Waits for a request at most {@code timeout}: kanuki's deadline, not the client's retries, decides. */
    <T> T await(CompletableFuture<T> request, String what) {
        return await(request, what, timeout);
    }

    /** Waits for a request at most {@code limit}: kanuki's deadline, not the client's retries, decides. */
    <T> T await(CompletableFuture<T> request, String what, Duration limit) {
        try {
            return request.get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new LockBackendException("etcd at " + scope + " did not answer within " + limit.toMillis() + "ms ("
                    + what + ")", "check that the etcd cluster runs, is reachable and has a quorum", e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            if (isRefused(cause)) {
                throw new LockBackendException("etcd at " + scope + " refused the connection (" + what + ")",
                        "check that etcd runs there and listens for clients on that port", cause);
            }
            throw new LockBackendException("etcd at " + scope + " failed (" + what + "): " + cause.getMessage(),
                    "check that the etcd cluster runs, is reachable and has a quorum", cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("interrupted while " + what + " on etcd at " + scope, null, e);
        }
    }

    /** One acquisition: the key, its create revision (the fencing token), the lease it lives on. */
    private static final class EtcdGrant implements Grant {
        final ByteSequence key;
        final long token;
        final EtcdSession session;

        EtcdGrant(ByteSequence key, long token, EtcdSession session) {
            this.key = key;
            this.token = token;
            this.session = session;
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
