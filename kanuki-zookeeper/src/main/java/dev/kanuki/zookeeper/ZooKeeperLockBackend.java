package dev.kanuki.zookeeper;

import dev.kanuki.Capabilities;
import dev.kanuki.LeaseKind;
import dev.kanuki.LockBackendException;
import dev.kanuki.LockStatus;
import dev.kanuki.spi.ChangeSubscription;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.zookeeper.ZooKeeperCalls.MultiAnswer;
import dev.kanuki.zookeeper.ZooKeeperCalls.Read;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.RetryNTimes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * ZooKeeper locks. An uncontended lock is one ephemeral node, {@code PREFIX/lock/STEM}, whose
 * data is the owner record (with the lock's real name), made by one request: a multi that
 * creates it only while the name's wait queue ({@code PREFIX/queue/STEM}) does not exist, so the
 * fast path never overtakes a waiter. Its {@code czxid} (the transaction id that created it) is
 * the fencing token; zxids are one counter for the whole ensemble, logged, with the leader's
 * epoch in the high bits, so they only grow, across restarts and leader changes. Release is one
 * {@code delete} at the node's version, sent on the session that created it.
 *
 * <p>A contended acquisition, and every reader of a read-write lock, waits in the name's
 * {@link WaitQueue}: FIFO across JVMs, each waiter watching one node, and holding by its own place
 * when nothing is before it. A name whose queue this provider saw in use within the last second
 * skips the fast path (a refused multi is still a logged write), and while the queue is in use a
 * release schedules the queue's removal a second later instead of sending it behind its delete. A semaphore of n permits is n nodes under {@code PREFIX/permit},
 * tried in order by the same guarded create; its waiters queue too, and only the first in line
 * watches the permits ({@link #takeFreePermit}). Where the nodes live: {@link NodePaths}; what
 * {@code status}, {@code list} and {@code break} see: {@link LockInspector}.
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
 * again.
 */
final class ZooKeeperLockBackend implements LockBackend {
    private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperLockBackend.class);
    private static final Capabilities CAPABILITIES = Capabilities.builder(LeaseKind.SESSION)
            .crossProcess().sharedLocks().semaphores().persistentFencing().ownerRecords().build();

    private final CuratorFramework client;
    private final ZooKeeperCalls calls;
    private final NodePaths paths;
    private final String scope;
    private final Duration timeout;
    /** Counts the times the connection was suspended or lost: a grant from before a change is not trusted. */
    private volatile long connectionEpoch;
    private final LateCreates late;
    private final WaitQueue queue;
    private final LockInspector inspector;
    private final PendingReleases releases;
    /**
     * Queue directories this provider saw in use a moment ago (nanoTime when seen), by path. A
     * fast-path {@code multi} fails while a queue exists, and a failed write still costs a write
     * round trip through the leader, so an acquisition of such a name goes straight to the queue.
     * Only a hint: a queue found gone sends the acquisition back to the fast path.
     */
    private final Map<String, Long> busyQueues = new ConcurrentHashMap<>();
    /** How long a queue seen in use counts as still in use. */
    private static final long BUSY_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** Names remembered at most; past it the memory starts again (it is only a hint). */
    private static final int BUSY_MAX = 4096;
    /** Queue directories whose removal is scheduled ({@link #removeQueueIfEmpty}). */
    private final Set<String> pendingQueueDeletes = ConcurrentHashMap.newKeySet();
    /**
     * The longest a release waits for its answer before it goes on in the background: a caller
     * closing a handle without a quorum must not wait a whole request timeout.
     */
    static final Duration CLOSE_WAIT = Duration.ofSeconds(1);
    /** How long opening waits for a session before it checks whether every server refuses connections. */
    private static final long FIRST_CONNECT_MILLIS = 250;
    /** Sends the scheduled removals and the retried releases; made on first use. */
    private ScheduledExecutorService laterDeletes;

    ZooKeeperLockBackend(String connectString, String prefix, String scope, Duration timeout, Duration session) {
        this.paths = NodePaths.under(prefix);
        this.scope = scope;
        this.timeout = timeout;
        this.client = CuratorFrameworkFactory.builder()
                .connectString(connectString)
                .sessionTimeoutMs(Math.toIntExact(session.toMillis()))
                .connectionTimeoutMs(Math.toIntExact(Math.min(timeout.toMillis(), session.toMillis())))
                .retryPolicy(new RetryNTimes(0, 0)) // kanuki's engine retries, within the caller's deadline
                .ensembleTracker(false) // the servers are the URI's, not whatever the ensemble's config says
                .build();
        this.calls = new ZooKeeperCalls(client, scope, timeout);
        this.releases = new PendingReleases(calls, this::laterDeletes);
        this.late = new LateCreates(calls, releases);
        this.queue = new WaitQueue(calls, releases);
        this.inspector = new LockInspector(calls, paths, queue, releases);
        client.getConnectionStateListenable().addListener((c, state) -> {
            if (state == ConnectionState.SUSPENDED || state == ConnectionState.LOST) {
                connectionEpoch++; // one writer: Curator calls its listeners on one thread
                LOG.debug("ZooKeeper connection {} at {}: locks taken before are no longer trusted", state, scope);
            }
        });
        client.start();
        boolean connected;
        long until = System.nanoTime() + timeout.toNanos();
        try {
            connected = client.blockUntilConnected(Math.toIntExact(Math.min(FIRST_CONNECT_MILLIS, timeout.toMillis())),
                    TimeUnit.MILLISECONDS);
            if (!connected && ServerProbe.everyServerRefuses(connectString, timeout)) {
                client.close();
                throw new LockBackendException("ZooKeeper at " + scope + " refused the connection",
                        "check that ZooKeeper runs there and listens for clients on that port", null);
            }
            long left = until - System.nanoTime();
            if (!connected && left > 0) {
                connected = client.blockUntilConnected(Math.toIntExact(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left))),
                        TimeUnit.MILLISECONDS);
            }
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

    @Override
    public Optional<Grant> tryAcquire(LockRequest request) {
        List<String> nodes = paths.nodes(request);
        byte[] data = OwnerRecord.encode(request.owner(), request.name());
        long epoch = connectionEpoch;
        if (late.any(request)) {
            Optional<Grant> own = takeOwnLateNode(request, nodes, data, epoch);
            if (own.isPresent()) {
                return own;
            }
        }
        // retries of a create lost with the connection stop here; each call waits at most the caller's time left
        long until = System.nanoTime() + request.callTimeout(timeout).toNanos();
        String dir = paths.queue(request);
        WaitQueue.Front front = request.mode() == LockMode.PERMIT ? takeFreePermit(request, nodes, data)
                : queue.holdUnlessLocked(nodes.get(0));
        boolean fastFirst = request.mode() != LockMode.SHARED && !queue.isWaiting(request);
        if (fastFirst && seenBusy(dir)) {
            try {
                return queued(request, queue.advance(request, dir, data, front, epoch, until, true));
            } catch (WaitQueue.NoQueue e) {
                busyQueues.remove(dir); // the queue went meanwhile: the fast path is open
            }
        }
        if (fastFirst) {
            Optional<Grant> fast = fastPath(request, dir, nodes, data, until);
            if (fast.isPresent()) {
                busyQueues.remove(dir);
                return fast;
            }
        }
        try {
            // a fast path refused because the queue exists has just marked it busy
            return queued(request, queue.advance(request, dir, data, front, epoch, until, seenBusy(dir)));
        } catch (WaitQueue.NoQueue e) {
            busyQueues.remove(dir);
            return queued(request, queue.advance(request, dir, data, front, epoch, until, false));
        }
    }

    private Optional<Grant> queued(LockRequest request, Optional<ZkGrant> queued) {
        queued.ifPresent(g -> late.settle(request, g.token)); // a late fast-path node of this acquisition goes
        return queued.map(g -> g);
    }

    /** {@return whether the queue directory {@code dir} was seen in use a moment ago} */
    private boolean seenBusy(String dir) {
        Long seen = busyQueues.get(dir);
        if (seen == null) {
            return false;
        }
        if (System.nanoTime() - seen > BUSY_NANOS) {
            busyQueues.remove(dir, seen);
            return false;
        }
        return true;
    }

    /**
     * The last place to leave removes the queue, which opens the fast path again. The delete is a
     * write even when it fails (others still wait), and it would sit in this session's pipeline
     * before the next request, so while the queue is in use it is sent once, a moment later, not
     * after every release: an empty queue left meanwhile only sends acquisitions through it.
     */
    private void removeQueueIfEmpty(String dir) {
        if (!seenBusy(dir)) {
            deleteQueueIfEmpty(dir);
        } else if (pendingQueueDeletes.add(dir)) {
            try {
                laterDeletes().schedule(() -> {
                    pendingQueueDeletes.remove(dir);
                    deleteQueueIfEmpty(dir);
                }, BUSY_NANOS, TimeUnit.NANOSECONDS);
            } catch (RuntimeException e) {
                pendingQueueDeletes.remove(dir); // closed meanwhile: the server removes an empty container
            }
        }
    }

    /** Deletes the queue if it is empty; one that others still wait in marks the name busy. */
    private void deleteQueueIfEmpty(String dir) {
        calls.deleteIfEmpty(dir).thenAccept(code -> {
            if (code == Code.NOTEMPTY) {
                markBusy(dir);
            } else {
                busyQueues.remove(dir);
            }
        });
    }

    private synchronized ScheduledExecutorService laterDeletes() {
        if (laterDeletes == null) {
            laterDeletes = Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "kanuki-zookeeper-cleanup");
                t.setDaemon(true);
                return t;
            });
        }
        return laterDeletes;
    }

    private void markBusy(String dir) {
        if (busyQueues.size() >= BUSY_MAX) {
            busyQueues.clear();
        }
        busyQueues.put(dir, System.nanoTime());
    }

    /**
     * The uncontended path: one request per node tried (the lock node, or each permit node in
     * turn), a create guarded by the queue's absence ({@link #createUnlessQueued}). Stops as soon
     * as it finds a queue: the fast path never overtakes a waiter.
     */
    private Optional<Grant> fastPath(LockRequest request, String dir, List<String> nodes, byte[] data, long until) {
        boolean ambiguous = false;
        for (String node : nodes) {
            Guarded attempt = createUnlessQueued(request, dir, node, data, until);
            if (attempt.created() != null) {
                return Optional.of(granted(request, node, attempt.created(), attempt.epoch()));
            }
            ambiguous |= attempt.ambiguous();
            if (attempt.queued()) {
                markBusy(dir);
                break;
            }
        }
        // after a connection loss, the node in the way may be this acquisition's own
        return ambiguous ? takeOwnLateNode(request, nodes, data, connectionEpoch) : Optional.empty();
    }

    /**
     * What a guarded create found.
     *
     * @param created the node's stat when it was created, else null
     * @param queued the queue directory exists: waiters queue
     * @param ambiguous an attempt's answer was lost with the connection: it may have been applied
     * @param epoch the connection epoch the create was sent in
     */
    private record Guarded(Stat created, boolean queued, boolean ambiguous, long epoch) {
    }

    /**
     * One request: a multi that creates and deletes the queue directory {@code dir} (so it
     * succeeds only while no queue exists) and creates the ephemeral {@code node}. The
     * directory's create returns its {@link Stat}, whose {@code czxid} is the multi's zxid: the
     * node's {@code czxid}, the fencing token. A first create under this prefix makes the parents.
     */
    private Guarded createUnlessQueued(LockRequest request, String dir, String node, byte[] data, long until) {
        List<Op> ops = List.of(
                Op.create(dir, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.CONTAINER),
                Op.delete(dir, -1),
                Op.create(node, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL));
        boolean parents = false;
        boolean ambiguous = false;
        while (true) {
            long epoch = connectionEpoch; // a grant is trusted from the connection it was made on
            MultiAnswer answer = sendCreate(request, node, ops);
            Code code = answer.code();
            boolean timeLeft = System.nanoTime() < until;
            if (code == Code.OK) {
                return new Guarded(createdStat(answer), false, ambiguous, epoch);
            } else if (code == Code.NODEEXISTS) {
                return new Guarded(null, answer.failedOp() == 0, ambiguous, epoch);
            } else if (code == Code.NONODE && !parents) {
                createParents(request, List.of(NodePaths.parent(node), paths.queueDir()));
                parents = true;
            } else if (code == Code.CONNECTIONLOSS && timeLeft) {
                // The connection dropped with the multi in flight: it may have been applied.
                // Curator reconnects (the session lives on); try again within the same budget.
                late.maybe(request);
                ambiguous = true;
                ZooKeeperCalls.pauseBeforeRetry();
            } else if (code == Code.SESSIONEXPIRED && timeLeft) {
                // Nothing of ours is left on that session; Curator opens a new one: try again on it.
                ZooKeeperCalls.pauseBeforeRetry();
            } else {
                throw calls.failure(code, "acquiring");
            }
        }
    }

    /**
     * The front of a semaphore's queue: the first place takes a free permit and leaves the queue
     * in one multi, or watches every permit (only the first place does: a returned permit wakes
     * one waiter). The multi creates and deletes a probe container to learn its own zxid, the
     * permit's {@code czxid}.
     */
    private WaitQueue.Front takeFreePermit(LockRequest request, List<String> permits, byte[] data) {
        return (place, stat, watch, epoch) -> {
            String dir = NodePaths.parent(place);
            for (String permit : permits) {
                MultiAnswer answer = sendCreate(request, permit, List.of(
                        Op.create(dir + "/zxid", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.CONTAINER),
                        Op.delete(dir + "/zxid", -1),
                        Op.create(permit, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL),
                        Op.delete(place, -1)));
                if (answer.code() == Code.OK) {
                    calls.deleteIfEmpty(dir);
                    return Optional.of(grant(request, permit, createdStat(answer), epoch));
                }
                if (answer.failedOp() == 3) {
                    return null; // our place is gone (its session ended): read the queue again
                }
                if (answer.code() != Code.NODEEXISTS) {
                    if (answer.code() == Code.CONNECTIONLOSS) {
                        late.maybe(request); // applied or not: the abandoned request's permit is found by its record
                    }
                    throw calls.failure(answer.code(), "acquiring");
                }
            }
            for (String permit : permits) {
                if (watch.apply(permit).code() == Code.NONODE) {
                    return null; // returned since we tried it
                }
            }
            return Optional.empty();
        };
    }

    /** Sends a multi that creates {@code node}; an answer that comes too late is followed. */
    private MultiAnswer sendCreate(LockRequest request, String node, List<Op> ops) {
        CompletableFuture<MultiAnswer> sent = calls.multi(ops);
        try {
            return calls.await(sent, "acquiring", request.callTimeout(timeout));
        } catch (LockBackendException e) {
            if (!sent.isDone()) {
                late.follow(request, node, sent.thenApply(answer -> answer.code() == Code.OK ? createdStat(answer) : null));
            }
            throw e;
        }
    }

    /** {@return the stat of the ephemeral node a guarded multi created (its czxid is the probe's)} */
    private static Stat createdStat(MultiAnswer answer) {
        Stat probe = ((OpResult.CreateResult) answer.results().get(0)).getStat();
        Stat node = new Stat();
        node.setCzxid(probe.getCzxid()); // one multi, one transaction, one zxid
        node.setVersion(0);
        node.setEphemeralOwner(answer.session());
        return node;
    }

    private void createParents(LockRequest request, List<String> parents) {
        for (String parent : parents) {
            CuratorEvent made = calls.await(ZooKeeperCalls.send(cb -> client.create().creatingParentsIfNeeded()
                    .inBackground(cb).forPath(parent)), "creating " + parent, request.callTimeout(timeout));
            Code code = Code.get(made.getResultCode());
            if (code != Code.OK && code != Code.NODEEXISTS) {
                throw calls.failure(code, "creating " + parent);
            }
        }
    }

    /** A grant of a lock or permit node: a place this acquisition took in a queue meanwhile goes. */
    private Grant granted(LockRequest request, String path, Stat stat, long epoch) {
        queue.leave(request);
        return grant(request, path, stat, epoch);
    }

    private ZkGrant grant(LockRequest request, String path, Stat stat, long epoch) {
        late.settle(request, stat.getCzxid()); // late creates of other attempts are deleted, this one kept
        return new ZkGrant(path, stat.getCzxid(), stat.getVersion(), stat.getEphemeralOwner(), epoch, null);
    }

    /**
     * An earlier attempt of this acquisition, whose answer we did not wait for, may have created
     * a node: take it when it carries this request's record on our session, remove it when it
     * carries it on an old one.
     */
    private Optional<Grant> takeOwnLateNode(LockRequest request, List<String> nodes, byte[] data, long epoch) {
        long session = calls.sessionId();
        List<CompletableFuture<Read>> reads = new ArrayList<>();
        for (String node : nodes) {
            reads.add(calls.getData(node, null));
        }
        for (int i = 0; i < nodes.size(); i++) {
            Read read = calls.await(reads.get(i), "acquiring", request.callTimeout(timeout));
            if (read.code() != Code.OK || !Arrays.equals(read.data(), data)) {
                continue;
            }
            Stat stat = read.stat();
            if (stat.getEphemeralOwner() == session) {
                return Optional.of(granted(request, nodes.get(i), stat, epoch));
            }
            calls.deleteOnSession(nodes.get(i), stat.getVersion(), stat.getEphemeralOwner());
        }
        return Optional.empty();
    }

    /**
     * The engine gave up on this acquisition: its place in the wait queue goes, and a create whose
     * answer we did not wait for may still have made a node: remove any that carries this
     * acquisition's record.
     */
    @Override
    public void abandon(LockRequest request) {
        try {
            queue.leave(request);
        } catch (LockBackendException e) {
            LOG.debug("cannot leave the wait queue for {} ({}); the place goes when the session ends", request,
                    e.getMessage());
        }
        if (!late.settle(request, -1)) {
            return; // every attempt was answered: nothing can appear behind the engine's back
        }
        byte[] data = OwnerRecord.encode(request.owner(), request.name());
        for (String path : paths.nodes(request)) {
            // applied on the server, answer not (yet) here: found by its record
            calls.getData(path, null).whenComplete((read, e) -> {
                if (read != null && read.code() == Code.OK && Arrays.equals(read.data(), data)) {
                    releases.delete(path, read.stat().getCzxid(), read.stat().getVersion(),
                            read.stat().getEphemeralOwner());
                }
            });
        }
    }

    /**
     * Deletes the grant's node, at the version it was created with (or, for a grant found lost,
     * after reading that it is still ours). Waits at most the request timeout: a delete without a
     * definite answer by then (a leader election, a dropped connection) goes on in the background
     * until the node is deleted or its session ends ({@link PendingReleases}); meanwhile this
     * provider's {@code status} calls the lock stale.
     */
    @Override
    public void release(Grant grant) {
        ZkGrant g = (ZkGrant) grant;
        CompletableFuture<Boolean> deleted = releases.delete(g.path, g.token, g.lost ? -1 : g.version, g.sessionId);
        if (g.queueDir != null) {
            deleted.thenAccept(ours -> removeQueueIfEmpty(g.queueDir));
        }
        Duration wait = CLOSE_WAIT.compareTo(timeout) < 0 ? CLOSE_WAIT : timeout;
        try {
            calls.await(deleted, "releasing", wait);
        } catch (LockBackendException e) {
            LOG.warn("release of a ZooKeeper lock at {} not confirmed within {}ms ({}); retrying in the background"
                    + " until its node is deleted or its session ends", scope, wait.toMillis(), e.getMessage());
        }
    }

    @Override
    public boolean verify(Grant grant) {
        ZkGrant g = (ZkGrant) grant;
        if (g.epoch != connectionEpoch || g.lost) {
            g.lost = true; // suspended or lost since: the session may have expired on the ensemble
            return false;
        }
        CuratorEvent read = calls.await(ZooKeeperCalls.send(cb -> client.checkExists().inBackground(cb).forPath(g.path)),
                "verifying");
        Stat stat = read.getStat();
        boolean ours = read.getResultCode() == Code.OK.intValue() && stat != null && stat.getCzxid() == g.token
                && stat.getEphemeralOwner() == g.sessionId && g.epoch == connectionEpoch;
        if (!ours) {
            g.lost = true;
        }
        return ours;
    }

    /** A waiter's place in its queue watches the one node it waits for (the first place in a semaphore's, every permit). */
    @Override
    public ChangeSubscription watchChanges(LockRequest request, Runnable onChange) {
        return queue.subscribe(request, onChange);
    }

    @Override
    public LockStatus status(String name) {
        return inspector.status(name);
    }

    @Override
    public List<LockStatus> list() {
        return inspector.list();
    }

    @Override
    public LockStatus breakLock(String name, boolean force) {
        return inspector.breakLock(name, force);
    }

    @Override
    public void close() {
        releases.close(); // closing the session below deletes whatever node a release still retries
        synchronized (this) {
            if (laterDeletes != null) {
                laterDeletes.shutdownNow();
            }
        }
        // Queue removals still scheduled are sent now, so that a provider closed right after its
        // last release leaves no empty queue (the server would remove it, but only after a while).
        // Not connected: nothing would answer before the close; the server removes them.
        List<CompletableFuture<Code>> deletes = new ArrayList<>();
        if (client.getZookeeperClient().isConnected()) {
            for (String dir : pendingQueueDeletes) {
                deletes.add(calls.deleteIfEmpty(dir));
            }
        }
        pendingQueueDeletes.clear();
        try {
            CompletableFuture.allOf(deletes.toArray(CompletableFuture[]::new)).get(Math.min(timeout.toMillis(), 1000),
                    TimeUnit.MILLISECONDS);
        } catch (Exception e) {
            LOG.debug("queue removals not answered before closing ({}); the server removes empty queues", e.toString());
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        }
        client.close(); // ends the session: any node still on it goes at once
    }
}
