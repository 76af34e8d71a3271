package dev.kanuki.zookeeper;

import dev.kanuki.LockBackendException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.api.BackgroundCallback;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.OpResult;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

/**
 * The calls the ZooKeeper backend makes, each sent in the background and awaited at most a
 * given time: kanuki's deadline, not a client retry loop, decides how long a call may take.
 * Failures become {@link LockBackendException}s naming the ensemble.
 */
final class ZooKeeperCalls {
    private static final String HINT = "check that the ZooKeeper ensemble runs, is reachable and has a quorum";

    final CuratorFramework client;
    final String scope;
    final Duration timeout;

    ZooKeeperCalls(CuratorFramework client, String scope, Duration timeout) {
        this.client = client;
        this.scope = scope;
        this.timeout = timeout;
    }

    /** One background call through Curator. */
    interface Call {
        void send(BackgroundCallback callback) throws Exception;
    }

    /** {@return the answer to one background call} */
    static CompletableFuture<CuratorEvent> send(Call call) {
        CompletableFuture<CuratorEvent> answer = new CompletableFuture<>();
        try {
            call.send((c, event) -> answer.complete(event));
        } catch (Exception e) {
            answer.completeExceptionally(e);
        }
        return answer;
    }

    /** A multi's answer: its result code and, when the server answered, one result per operation. */
    record MultiAnswer(int rc, List<OpResult> results, long session) {
        /** {@return the index of the operation that failed, or -1 when none did or the connection failed} */
        int failedOp() {
            for (int i = 0; results != null && i < results.size(); i++) {
                if (errorOf(i) != Code.OK) {
                    return i;
                }
            }
            return -1;
        }

        /** {@return the multi's outcome: OK, the failed operation's error, or the connection's} */
        Code code() {
            int failed = failedOp();
            return failed >= 0 ? errorOf(failed) : results == null ? Code.get(rc) : Code.OK;
        }

        /** {@return the error of operation {@code i} (OK, the failure, or RUNTIMEINCONSISTENCY after it)} */
        Code errorOf(int i) {
            if (results == null) {
                return Code.get(rc); // no answer per operation: the connection failed
            }
            return results.get(i) instanceof OpResult.ErrorResult e ? Code.get(e.getErr()) : Code.OK;
        }
    }

    /**
     * Sends a multi (one request, one transaction) on the current session's handle.
     *
     * @return its answer, with the id of the session it was sent on
     */
    CompletableFuture<MultiAnswer> multi(List<Op> ops) {
        CompletableFuture<MultiAnswer> done = new CompletableFuture<>();
        try {
            ZooKeeper zk = client.getZookeeperClient().getZooKeeper();
            long session = zk.getSessionId();
            zk.multi(ops, (rc, path, ctx, results) -> done.complete(new MultiAnswer(rc, results, session)), null);
        } catch (Exception e) {
            done.completeExceptionally(e);
        }
        return done;
    }

    /**
     * Deletes a node at a version on the ZooKeeper session that owns it, never on a later one:
     * a session's handle sends nothing once that session has expired (and with it, the node), so
     * a delayed delete cannot remove a node another holder created since (versions restart at 0).
     *
     * @param version the node's version, or -1 for any
     * @return the result code, or completes with -1 when the owning session is no longer ours
     */
    CompletableFuture<Integer> deleteOnSession(String path, int version, long owner) {
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

    /** A create's answer: its result code, and the path and stat of the node it made. */
    record Created(Code code, String path, Stat stat) {
    }

    /**
     * Creates an ephemeral-sequential node on the current session's handle, without its parents.
     * Requests sent on the same handle afterwards are answered after it (one connection, in order).
     */
    CompletableFuture<Created> createSequential(String path, byte[] data) {
        CompletableFuture<Created> done = new CompletableFuture<>();
        try {
            zk().create(path, data, ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL,
                    (rc, p, ctx, name, stat) -> done.complete(new Created(Code.get(rc), name, stat)), null);
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
        }
        return done;
    }

    /** A read's answer: its result code, and the data, stat or children it read. */
    record Read(Code code, byte[] data, Stat stat, List<String> children) {
    }

    /** Reads a node's data and stat, leaving {@code watcher} on it when it exists (null: no watch). */
    CompletableFuture<Read> getData(String path, Watcher watcher) {
        CompletableFuture<Read> done = new CompletableFuture<>();
        try {
            zk().getData(path, watcher, (rc, p, ctx, data, stat) -> done.complete(
                    new Read(Code.get(rc), data, stat, null)), null);
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
        }
        return done;
    }

    /** Reads a node's children, without a watch. */
    CompletableFuture<Read> getChildren(String path) {
        CompletableFuture<Read> done = new CompletableFuture<>();
        try {
            zk().getChildren(path, false, (rc, p, ctx, children, stat) -> done.complete(
                    new Read(Code.get(rc), null, stat, children)), null);
        } catch (RuntimeException e) {
            done.completeExceptionally(e);
        }
        return done;
    }

    /**
     * Deletes a node if it has no children, without waiting for the answer (NOTEMPTY and NONODE are fine).
     *
     * @return the answer's code, when it comes (completes exceptionally when the request could not be sent)
     */
    CompletableFuture<Code> deleteIfEmpty(String path) {
        CompletableFuture<Code> done = new CompletableFuture<>();
        try {
            zk().delete(path, -1, (rc, p, ctx) -> done.complete(Code.get(rc)), null);
        } catch (RuntimeException e) {
            done.completeExceptionally(e); // no session: the server removes an empty container node by itself
        }
        return done;
    }

    /**
     * Removes this session's data watches on a node, on the server too. (Removing one watcher
     * object only checks with the server, which keeps its watch until the node changes.) Any other
     * watcher of this client on the node is told ({@code DataWatchRemoved}) and must read again.
     */
    void forgetWatches(String path) {
        try {
            zk().removeAllWatches(path, Watcher.WatcherType.Data, true, (rc, p, ctx) -> { }, null);
        } catch (RuntimeException e) {
            // nothing to forget on this handle
        }
    }

    /** {@return the current session's handle} */
    ZooKeeper zk() {
        try {
            return client.getZookeeperClient().getZooKeeper();
        } catch (Exception e) {
            throw new LockBackendException("no ZooKeeper session at " + scope + ": " + e.getMessage(), HINT, e);
        }
    }

    /** {@return the id of the current session} */
    long sessionId() {
        return zk().getSessionId();
    }

    <T> T await(CompletableFuture<T> request, String what) {
        return await(request, what, timeout);
    }

    /** Waits for a call at most {@code limit}: kanuki's deadline, not the client's retries, decides. */
    <T> T await(CompletableFuture<T> request, String what, Duration limit) {
        try {
            return request.get(Math.max(0, limit.toMillis()), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            throw new LockBackendException("ZooKeeper at " + scope + " did not answer within " + limit.toMillis()
                    + "ms (" + what + ")", HINT, e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw new LockBackendException("ZooKeeper at " + scope + " failed (" + what + "): " + cause.getMessage(),
                    HINT, cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("interrupted while " + what + " on ZooKeeper at " + scope, null, e);
        }
    }

    LockBackendException failure(Code code, String what) {
        return new LockBackendException("ZooKeeper at " + scope + " failed (" + what + "): " + code, HINT, null);
    }

    /** Lets Curator's event thread install the new connection or session before the next try. */
    static void pauseBeforeRetry() {
        try {
            Thread.sleep(20);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("interrupted while acquiring on ZooKeeper", null, e);
        }
    }
}
