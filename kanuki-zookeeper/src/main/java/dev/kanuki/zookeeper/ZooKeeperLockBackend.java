package dev.kanuki.zookeeper;

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
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ZooKeeper locks. A lock is one ephemeral node, {@code PREFIX/lock/STEM}, whose data is the
 * owner record (with the lock's real name). Acquiring is one {@code create} that returns the
 * node's {@link Stat}: it succeeds for exactly one client, and the node's {@code czxid} (the
 * transaction id that created it) is the fencing token; zxids are one counter for the whole
 * ensemble, logged, with the leader's epoch in the high bits, so they only grow, across restarts
 * and leader changes. The parents are created only when the first create finds them missing.
 * Release is one {@code delete} at the node's version, sent on the session that created it.
 * A semaphore of n permits is n such nodes under {@code PREFIX/permit}, tried in order.
 *
 * <p>The lease is the provider's ZooKeeper session ({@link LeaseKind#SESSION}): when this JVM dies
 * or stays cut off for longer than the session timeout, the ensemble expires the session and
 * deletes its nodes. The engine verifies each held lock every second: the node must exist with our
 * {@code czxid} and our session as its {@code ephemeralOwner}, and the connection must not have
 * been {@code SUSPENDED} or {@code LOST} since the lock was taken: while disconnected, this client
 * cannot know whether the ensemble has already expired its session and handed the lock to another.
 *
 * <p>Every call waits at most the caller's time left ({@link LockRequest#callTimeout}), never for a
 * Curator retry loop: the client is built with no retries, and kanuki's engine decides when to try
 * again. Waiters are woken by a watch on the node, not by polling.
 */
final class ZooKeeperLockBackend implements LockBackend {
    private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperLockBackend.class);
    private static final Capabilities CAPABILITIES = Capabilities.builder(LeaseKind.SESSION)
            .crossProcess().semaphores().persistentFencing().ownerRecords().build();

    private final CuratorFramework client;
    private final String lockDir;
    private final String permitDir;
    private final String scope;
    private final Duration timeout;
    /** Counts the times the connection was suspended or lost: a grant from before a change is not trusted. */
    private volatile long connectionEpoch;
    /** Acquisitions sent but not answered in time. */
    private final Map<LockRequest, Late> late = new ConcurrentHashMap<>();

    ZooKeeperLockBackend(String connectString, String prefix, String scope, Duration timeout, Duration session) {
        this.lockDir = prefix + "/lock";
        this.permitDir = prefix + "/permit";
        this.scope = scope;
        this.timeout = timeout;
        this.client = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs(Math.toIntExact(session.toMillis()))
                .connectionTimeoutMs(Math.toIntExact(Math.min(timeout.toMillis(), session.toMillis())))
                .retryPolicy(new RetryNTimes(0, 0)) // kanuki's engine retries, within the caller's deadline
                .ensembleTracker(false) // the servers are the URI's, not whatever the ensemble's config says
                .build();
        client.getConnectionStateListenable().addListener((c, state) -> {
            if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
                connectionEpoch++; // one writer: Curator calls its listeners on one thread
                LOG.debug("ZooKeeper connection {} at {}: locks taken before are no longer trusted", state, scope);
            }
        });
        client.start();
        boolean connected;
        try {
            connected = client.blockUntilConnected(Math.toIntExact(timeout.toMillis()), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            connected = false;
        }
        if (!connected) {
            client.close();
            throw new LockBackendException("cannot connect to ZooKeeper at " + scope + " within " + timeout.toMillis()
                    + "ms", "check that ZooKeeper runs there, is reachable and has a quorum", null);
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

    String path(String name) {
        return lockDir + "/" + SafeNames.stem(name, "L");
    }

    /** @return the nodes a request may take: the lock's node, or one node per semaphore permit */
    List<String> paths(LockRequest request) {
        if (request.mode() == LockMode.EXCLUSIVE) {
            return List.of(path(request.name()));
        }
        if (request.mode() != LockMode.PERMIT) {
            throw new UnsupportedOperationException("zookeeper: no shared locks");
        }
        String stem = permitDir + "/" + SafeNames.stem(request.name(), "S") + ".";
        List<String> out = new ArrayList<>(request.permits());
        for (int slot = 0; slot < request.permits(); slot++) {
            out.add(stem + slot);
        }
        return out;
    }

    @Override
    public Optional<Grant> tryAcquire(LockRequest request) {
        List<String> paths = paths(request);
        byte[] data = encode(request.owner(), request.name()).getBytes(StandardCharsets.UTF_8);
        long epoch = connectionEpoch;
        Late earlier = late.get(request);
        if (earlier != null) {
            Optional<Grant> own = takeOwnLateNode(request, earlier, paths, data, epoch);
            if (own.isPresent()) {
                return own;
            }
        }
        long until = System.nanoTime() + request.callTimeout(timeout).toNanos(); // the caller's deadline bounds it all
        boolean ambiguous = false;
        for (String path : paths) {
            boolean parents = false;
            CuratorEvent created;
            Code code;
            while (true) {
                epoch = connectionEpoch; // a grant is trusted from the connection it was made on
                created = create(request, path, data, parents, Duration.ofNanos(Math.max(0, until - System.nanoTime())));
                code = Code.get(created.getResultCode());
                if (code == Code.NONODE && !parents) {
                    parents = true; // the first lock under this prefix: create the parents too, once
                } else if (code == Code.CONNECTIONLOSS && System.nanoTime() < until) {
                    // The connection dropped with the create in flight: it may have been applied.
                    // Curator reconnects (the session lives on); try again within the same budget.
                    late.computeIfAbsent(request, r -> new Late());
                    ambiguous = true;
                    pauseBeforeRetry();
                } else if (code == Code.SESSIONEXPIRED && System.nanoTime() < until) {
                    // Nothing of ours is left on that session; Curator opens a new one: try again on it.
                    pauseBeforeRetry();
                } else {
                    break;
                }
            }
            if (code == Code.OK) {
                return Optional.of(granted(request, path, created.getStat(), epoch));
            }
            if (code != Code.NODEEXISTS) {
                throw failure(code, "acquiring");
            }
        }
        Late maybeOurs = late.get(request);
        if (ambiguous && maybeOurs != null) {
            return takeOwnLateNode(request, maybeOurs, paths, data, epoch); // the node that exists may be ours
        }
        return Optional.empty();
    }

    /** Lets Curator's event thread install the new connection or session before the next try. */
    private static void pauseBeforeRetry() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("interrupted while acquiring on ZooKeeper", null, e);
        }
    }

    private Grant granted(LockRequest request, String path, Stat stat, long epoch) {
        Late entry = late.remove(request);
        if (entry != null) {
            entry.settle(stat.getCzxid()); // late creates of other attempts are deleted, this one kept
        }
        return new ZkGrant(path, stat.getCzxid(), stat.getVersion(), stat.getEphemeralOwner(), epoch);
    }

    /**
     * An earlier attempt of this acquisition, whose answer we did not wait for, may have created
     * a node: take it when it carries this request's record on our session, remove it when it
     * carries it on an old one.
     */
    private Optional<Grant> takeOwnLateNode(LockRequest request, Late entry, List<String> paths, byte[] data,
            long epoch) {
        long session = sessionId();
        List<CompletableFuture<CuratorEvent>> reads = new ArrayList<>();
        for (String path : paths) {
            reads.add(send(cb -> client.getData().inBackground(cb).forPath(path)));
        }
        for (int i = 0; i < paths.size(); i++) {
            CuratorEvent read = await(reads.get(i), "acquiring", request.callTimeout(timeout));
            if (read.getResultCode() != Code.OK.intValue() || !Arrays.equals(read.getData(), data)) {
                continue;
            }
            Stat stat = read.getStat();
            if (stat.getEphemeralOwner() == session) {
                return Optional.of(granted(request, paths.get(i), stat, epoch));
            }
            deleteOnSession(paths.get(i), stat.getVersion(), stat.getEphemeralOwner());
        }
        return Optional.empty();
    }

    private CuratorEvent create(LockRequest request, String path, byte[] data, boolean parents, Duration budget) {
        CompletableFuture<CuratorEvent> sent = send(cb -> {
            if (parents) {
                client.create().storingStatIn(new Stat()).creatingParentsIfNeeded().withMode(CreateMode.EPHEMERAL)
                        .inBackground(cb).forPath(path, data);
            } else {
                client.create().storingStatIn(new Stat()).withMode(CreateMode.EPHEMERAL)
                        .inBackground(cb).forPath(path, data);
            }
        });
        try {
            return await(sent, "acquiring", budget);
        } catch (LockBackendException e) {
            if (!sent.isDone()) {
                watchLateAnswer(request, path, sent);
            }
            throw e;
        }
    }

    /**
     * A create we stopped waiting for (a slow, paused or unreachable server) may still be applied.
     * Until the acquisition is settled, a node it made waits for the request's next attempt to
     * take it; once the acquisition is settled (granted another node, or given up), it is deleted.
     */
    private void watchLateAnswer(LockRequest request, String path, CompletableFuture<CuratorEvent> sent) {
        Late entry = late.computeIfAbsent(request, r -> new Late());
        sent.whenComplete((event, e) -> {
            if (event != null && event.getResultCode() == Code.OK.intValue()) {
                entry.applied(path, event.getStat());
            }
        });
    }

    /**
     * The engine gave up on this acquisition: a create whose answer we did not wait for may
     * still have made a node; remove any that carries this acquisition's record.
     */
    @Override
    public void abandon(LockRequest request) {
        Late entry = late.remove(request);
        if (entry == null) {
            return; // every attempt was answered: nothing can appear behind the engine's back
        }
        entry.settle(-1); // answers still to come delete their nodes
        byte[] data = encode(request.owner(), request.name()).getBytes(StandardCharsets.UTF_8);
        for (String path : paths(request)) {
            // applied on the server, answer not (yet) here: found by its record
            send(cb -> client.getData().inBackground(cb).forPath(path)).whenComplete((read, e) -> {
                if (read != null && read.getResultCode() == Code.OK.intValue() && Arrays.equals(read.getData(), data)) {
                    deleteOnSession(path, read.getStat().getVersion(), read.getStat().getEphemeralOwner());
                }
            });
        }
    }

    /** The creates of one acquisition that were not answered in time. */
    private final class Late {
        private boolean settled;
        private long keep = -1;
        private final List<LateNode> unclaimed = new ArrayList<>();

        /** A late create was applied: keep it for the next attempt, or delete it if the acquisition is settled. */
        void applied(String path, Stat stat) {
            synchronized (this) {
                if (!settled) {
                    unclaimed.add(new LateNode(path, stat));
                    return;
                }
            }
            if (stat.getCzxid() != keep) {
                deleteOnSession(path, stat.getVersion(), stat.getEphemeralOwner());
            }
        }

        /** @param kept the czxid of the node granted, or -1: every other late node is deleted */
        void settle(long kept) {
            List<LateNode> toDelete;
            synchronized (this) {
                settled = true;
                keep = kept;
                toDelete = new ArrayList<>(unclaimed);
                unclaimed.clear();
            }
            for (LateNode node : toDelete) {
                if (node.stat().getCzxid() != kept) {
                    deleteOnSession(node.path(), node.stat().getVersion(), node.stat().getEphemeralOwner());
                }
            }
        }
    }

    /** A node a late create made. */
    private record LateNode(String path, Stat stat) {
    }

    @Override
    public void release(Grant grant) {
        ZkGrant g = (ZkGrant) grant;
        try {
            int version = g.version;
            if (g.lost) {
                // Found lost: the node may be gone, another holder's, or still ours after a suspension
                // that ended: delete it only after reading that it is ours.
                CuratorEvent read = await(send(cb -> client.checkExists().inBackground(cb).forPath(g.path)), "releasing");
                Stat stat = read.getStat();
                if (read.getResultCode() != Code.OK.intValue() || stat == null || stat.getCzxid() != g.token
                        || stat.getEphemeralOwner() != g.sessionId) {
                    return;
                }
                version = stat.getVersion();
            }
            await(deleteOnSession(g.path, version, g.sessionId), "releasing", timeout);
        } catch (LockBackendException e) {
            // The node stays until its session ends (when this provider closes or this JVM dies).
            LOG.warn("cannot release a ZooKeeper lock ({}); it frees when the session ends", e.getMessage());
        }
    }

    /**
     * Deletes a node at a version on the ZooKeeper session that owns it, never on a later one:
     * a session's handle sends nothing once that session has expired (and with it, the node), so
     * a delayed delete cannot remove a node another holder created since (versions restart at 0).
     *
     * @return the result code, or completes with -1 when the owning session is no longer ours
     */
    private CompletableFuture<Integer> deleteOnSession(String path, int version, long owner) {
        CompletableFuture<Integer> done = new CompletableFuture<>();
        ZooKeeper zk;
        try {
            zk = client.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            done.completeExceptionally(e);
            return done;
        }
        if (zk.getSessionId() != owner) {
            done.complete(-1); // that session ended: the ensemble deleted its nodes
            return done;
        }
        zk.delete(path, version, (rc, p, ctx) -> done.complete(rc), null);
        return done;
    }

    @Override
    public boolean verify(Grant grant) {
        ZkGrant g = (ZkGrant) grant;
        if (g.epoch != connectionEpoch || g.lost) {
            g.lost = true; // suspended or lost since: the session may have expired on the ensemble
            return false;
        }
        CuratorEvent read = await(send(cb -> client.checkExists().inBackground(cb).forPath(g.path)), "verifying");
        Stat stat = read.getStat();
        boolean ours = read.getResultCode() == Code.OK.intValue() && stat != null && stat.getCzxid() == g.token
                && stat.getEphemeralOwner() == g.sessionId && g.epoch == connectionEpoch;
        if (!ours) {
            g.lost = true;
        }
        return ours;
    }

    @Override
    public ChangeSubscription watchChanges(LockRequest request, Runnable onChange) {
        List<NodeWatch> watches = new ArrayList<>();
        for (String path : paths(request)) { // a semaphore's waiter watches every permit
            NodeWatch watch = new NodeWatch(path, onChange);
            watch.arm();
            watches.add(watch);
        }
        return () -> watches.forEach(NodeWatch::cancel);
    }

    /**
     * A watch on one node, set again after each change until cancelled: ZooKeeper's watches fire
     * once. An exists watch fires on create, data change and delete (a release, or the expiry of
     * the holder's session).
     */
    private final class NodeWatch implements Watcher {
        private final String path;
        private final Runnable onChange;
        private volatile boolean cancelled;

        NodeWatch(String path, Runnable onChange) {
            this.path = path;
            this.onChange = onChange;
        }

        void arm() {
            if (cancelled) {
                return;
            }
            send(cb -> client.checkExists().usingWatcher(this).inBackground(cb).forPath(path)).whenComplete((r, e) -> {
                if (e != null || (r.getResultCode() != Code.OK.intValue() && r.getResultCode() != Code.NONODE.intValue())) {
                    onChange.run(); // not watching: let the waiter try (it falls back to its timer)
                }
            });
        }

        @Override
        public void process(WatchedEvent event) {
            if (cancelled) {
                return;
            }
            if (event.getType() != Event.EventType.None || event.getState() == Event.KeeperState.Expired) {
                arm(); // a node event used the watch up; an expired session dropped it
            }
            onChange.run();
        }

        void cancel() {
            cancelled = true; // the server forgets the watch when it next fires
        }
    }

    @Override
    public LockStatus status(String name) {
        CuratorEvent read = await(send(cb -> client.getData().inBackground(cb).forPath(path(name))), "reading status");
        Code code = Code.get(read.getResultCode());
        if (code == Code.NONODE) {
            return new LockStatus(name, LockStatus.State.FREE, Optional.empty(), -1);
        }
        if (code != Code.OK) {
            throw failure(code, "reading status");
        }
        return statusOf(name, read.getData(), read.getStat());
    }

    @Override
    public List<LockStatus> list() {
        CuratorEvent children = await(send(cb -> client.getChildren().inBackground(cb).forPath(lockDir)), "listing");
        Code code = Code.get(children.getResultCode());
        if (code == Code.NONODE) {
            return List.of();
        }
        if (code != Code.OK) {
            throw failure(code, "listing");
        }
        List<CompletableFuture<CuratorEvent>> reads = new ArrayList<>();
        for (String child : children.getChildren()) {
            reads.add(send(cb -> client.getData().inBackground(cb).forPath(lockDir + "/" + child)));
        }
        List<LockStatus> out = new ArrayList<>();
        for (CompletableFuture<CuratorEvent> r : reads) {
            CuratorEvent read = await(r, "listing");
            if (read.getResultCode() == Code.OK.intValue()) {
                String name = decodeName(new String(read.getData(), StandardCharsets.UTF_8));
                if (name != null) {
                    out.add(statusOf(name, read.getData(), read.getStat()));
                }
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
                    + " whose ZooKeeper session is alive; it is freed when that process ends or stays cut off past its"
                    + " session timeout, or break it with force");
        }
        CuratorEvent deleted = await(send(cb -> client.delete().inBackground(cb).forPath(path(name))), "breaking");
        Code code = Code.get(deleted.getResultCode());
        if (code != Code.OK && code != Code.NONODE) {
            throw failure(code, "breaking");
        }
        return before;
    }

    @Override
    public void close() {
        client.close(); // ends the session: any node still on it goes at once
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

    private static LockStatus statusOf(String name, byte[] data, Stat stat) {
        String[] f = new String(data == null ? new byte[0] : data, StandardCharsets.UTF_8).split("\t", 5);
        Optional<OwnerInfo> owner = Optional.empty();
        if (f.length == 5) {
            try {
                owner = Optional.of(new OwnerInfo(f[1], Long.parseLong(f[2]), f[0],
                        Instant.ofEpochMilli(Long.parseLong(f[3])), null));
            } catch (RuntimeException e) {
                owner = Optional.empty(); // a foreign node: held by someone unknown
            }
        }
        return new LockStatus(name, LockStatus.State.HELD, owner, stat.getCzxid());
    }

    // ------------------------------------------------------------------ calls

    private long sessionId() {
        try {
            return client.getZookeeperClient().getZooKeeper().getSessionId();
        } catch (Exception e) {
            throw new LockBackendException("no ZooKeeper session at " + scope + ": " + e.getMessage(),
                    "check that the ZooKeeper ensemble runs, is reachable and has a quorum", e);
        }
    }

    /** One background call. */
    private interface Call {
        void send(org.apache.curator.framework.api.BackgroundCallback callback) throws Exception;
    }

    private static CompletableFuture<CuratorEvent> send(Call call) {
        CompletableFuture<CuratorEvent> answer = new CompletableFuture<>();
        try {
            call.send((c, event) -> answer.complete(event));
        } catch (Exception e) {
            answer.completeExceptionally(e);
        }
        return answer;
    }

    private <T> T await(CompletableFuture<T> request, String what) {
        return await(request, what, timeout);
    }

    /** Waits for a call at most {@code limit}: kanuki's deadline, not the client's retries, decides. */
    private <T> T await(CompletableFuture<T> request, String what, Duration limit) {
        try {
            return request.get(limit.toMillis(), TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new LockBackendException("ZooKeeper at " + scope + " did not answer within " + limit.toMillis()
                    + "ms (" + what + ")", "check that the ZooKeeper ensemble runs, is reachable and has a quorum", e);
        } catch (java.util.concurrent.ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new LockBackendException("ZooKeeper at " + scope + " failed (" + what + "): " + cause.getMessage(),
                    "check that the ZooKeeper ensemble runs, is reachable and has a quorum", cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("interrupted while " + what + " on ZooKeeper at " + scope, null, e);
        }
    }

    private LockBackendException failure(Code code, String what) {
        return new LockBackendException("ZooKeeper at " + scope + " failed (" + what + "): " + code,
                "check that the ZooKeeper ensemble runs, is reachable and has a quorum", null);
    }

    /** One acquisition: the node, its czxid (the fencing token) and version, the session that owns it. */
    private static final class ZkGrant implements Grant {
        final String path;
        final long token;
        final int version;
        final long sessionId;
        final long epoch;
        volatile boolean lost;

        ZkGrant(String path, long token, int version, long sessionId, long epoch) {
            this.path = path;
            this.token = token;
            this.version = version;
            this.sessionId = sessionId;
            this.epoch = epoch;
        }

        @Override
        public long fencingToken() {
            return token;
        }
    }
}
