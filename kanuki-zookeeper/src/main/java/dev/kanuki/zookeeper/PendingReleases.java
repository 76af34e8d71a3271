package dev.kanuki.zookeeper;

import dev.kanuki.zookeeper.ZooKeeperCalls.Read;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Releases, and places or late nodes given up: the node is deleted until the answer is definite. A {@code delete} sent while
 * the ensemble elects a leader (the member we talk to lost its leader, or was the leader and died)
 * fails with {@code CONNECTIONLOSS}, {@code SESSIONMOVED} or no answer at all, though the session
 * survives on another member: given up, the ephemeral node would stay as long as the session, that
 * is, as long as this provider is open, and the lock would be stuck. So a release that got no
 * definite answer is sent again, in the background, until the node is deleted or known gone.
 *
 * <p>Never someone else's node: a retry first reads the node and deletes it only when its
 * {@code czxid} is the grant's token and its owner our session, at the version it read (a first
 * delete whose answer was lost may have been applied, and another client may have created the
 * node since, at version 0 again). Only our own session could delete our node between that read
 * and the delete (or {@code break --force}, whose hazard is documented). Bounded by the session: a
 * delete is only ever sent on the session that owns the node ({@link ZooKeeperCalls#deleteOnSession}),
 * and once that session has ended (expired, or this provider closed it) the ensemble has deleted
 * the node itself, so the retries stop.
 */
final class PendingReleases {
    private static final Logger LOG = LoggerFactory.getLogger(PendingReleases.class);
    /** The first retry comes soon (an election takes a few ticks); later ones at most a second apart. */
    private static final long FIRST_RETRY_MILLIS = 100;
    private static final long MAX_RETRY_MILLIS = 1000;

    private final ZooKeeperCalls calls;
    private final Supplier<ScheduledExecutorService> scheduler;
    /** Releases not yet definite, by node path: what {@code status} calls stale. */
    private final Map<String, CompletableFuture<Boolean>> pending = new ConcurrentHashMap<>();
    private volatile boolean closed;

    PendingReleases(ZooKeeperCalls calls, Supplier<ScheduledExecutorService> scheduler) {
        this.calls = calls;
        this.scheduler = scheduler;
    }

    /**
     * Deletes a grant's node, again and again until the answer is definite.
     *
     * @param version the version the node was created with, or -1 when it must be read first (a
     *     grant found lost: the node may be gone, another's, or still ours)
     * @return completes with true when our node was deleted, false when it was gone or not ours
     *     (never exceptionally)
     */
    CompletableFuture<Boolean> delete(String path, long token, int version, long session) {
        CompletableFuture<Boolean> done = new CompletableFuture<>();
        pending.put(path, done);
        done.whenComplete((deleted, e) -> pending.remove(path, done));
        if (version >= 0) {
            sendDelete(path, token, version, session, done, FIRST_RETRY_MILLIS);
        } else {
            readThenDelete(path, token, session, done, FIRST_RETRY_MILLIS);
        }
        return done;
    }

    /** {@return whether a release of the node at {@code path} is still being retried} */
    boolean isPending(String path) {
        return pending.containsKey(path);
    }

    /** Stops retrying: closing the provider ends the session, and the ensemble deletes its nodes. */
    void close() {
        closed = true;
        pending.values().forEach(f -> f.complete(false));
    }

    private void readThenDelete(String path, long token, long session, CompletableFuture<Boolean> done, long backoff) {
        if (stop(session, done)) {
            return;
        }
        bounded(calls.getData(path, null)).whenComplete((read, e) -> {
            Code code = read == null ? Code.CONNECTIONLOSS : read.code();
            if (code == Code.NONODE) {
                done.complete(false);
            } else if (code == Code.OK) {
                Stat stat = read.stat();
                if (stat.getCzxid() != token || stat.getEphemeralOwner() != session) {
                    done.complete(false); // ours went (with a delete whose answer was lost); this one is not ours
                } else {
                    sendDelete(path, token, stat.getVersion(), session, done, backoff);
                }
            } else {
                retry(path, token, session, done, backoff, code);
            }
        });
    }

    private void sendDelete(String path, long token, int version, long session, CompletableFuture<Boolean> done,
            long backoff) {
        if (stop(session, done)) {
            return;
        }
        bounded(calls.deleteOnSession(path, version, session)).whenComplete((rc, e) -> {
            if (rc != null && rc == -1) {
                done.complete(false); // that session ended: the ensemble deleted its nodes
                return;
            }
            Code code = rc == null ? Code.CONNECTIONLOSS : Code.get(rc);
            switch (code) {
                case OK -> done.complete(true);
                case NONODE, SESSIONEXPIRED -> done.complete(false);
                case BADVERSION -> readThenDelete(path, token, session, done, backoff); // not the node we made
                default -> retry(path, token, session, done, backoff, code);
            }
        });
    }

    /** No definite answer (a dropped connection, a moved session, no answer in time): read and delete again. */
    private void retry(String path, long token, long session, CompletableFuture<Boolean> done, long backoff,
            Code code) {
        if (stop(session, done)) {
            return;
        }
        if (backoff == FIRST_RETRY_MILLIS) {
            LOG.info("delete of ZooKeeper node {} (released, or a place or late node given up) not confirmed ({});"
                    + " retrying until it is deleted or its session ends", path, code);
        } else {
            LOG.debug("delete of ZooKeeper node {} still not confirmed ({})", path, code);
        }
        try {
            scheduler.get().schedule(() -> readThenDelete(path, token, session, done,
                    Math.min(backoff * 2, MAX_RETRY_MILLIS)), backoff, TimeUnit.MILLISECONDS);
        } catch (RuntimeException e) {
            done.complete(false); // shut down: the provider is closing, which ends the session
        }
    }

    /** {@return true (and {@code done} completed) when retrying is over: closed, or the session is no longer ours} */
    private boolean stop(long session, CompletableFuture<Boolean> done) {
        if (done.isDone()) {
            return true;
        }
        long current;
        try {
            current = calls.sessionId();
        } catch (RuntimeException e) {
            current = 0; // no handle: no session of ours left
        }
        if (closed || current != session) {
            done.complete(false); // the session ended: the ensemble deleted the node with it
            return true;
        }
        return false;
    }

    /** Each call waits at most the request timeout: a request that never answers counts as not answered. */
    private <T> CompletableFuture<T> bounded(CompletableFuture<T> call) {
        Duration limit = calls.timeout;
        return call.orTimeout(Math.max(1, limit.toMillis()), TimeUnit.MILLISECONDS);
    }
}
