package dev.kanuki.zookeeper;

import dev.kanuki.spi.LockRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.zookeeper.data.Stat;

/**
 * Creates of lock or permit nodes sent but not answered in time (a slow, paused or unreachable
 * server): they may still be applied. Until the acquisition is settled, a node such a create
 * made waits for the acquisition's next attempt to take it; once the acquisition is settled
 * (granted another node, or given up), it is deleted when its answer arrives.
 */
final class LateCreates {
    private final ZooKeeperCalls calls;
    /** A late node is deleted until the answer is definite: one left behind would hold the lock until the session ends. */
    private final PendingReleases deletes;
    private final Map<LockRequest, Late> late = new ConcurrentHashMap<>();

    LateCreates(ZooKeeperCalls calls, PendingReleases deletes) {
        this.calls = calls;
        this.deletes = deletes;
    }

    /** {@return whether an earlier attempt of this acquisition may have made a node} */
    boolean any(LockRequest request) {
        return late.containsKey(request);
    }

    /** Notes that an attempt of this acquisition may have made a node, answer unknown (a lost connection). */
    void maybe(LockRequest request) {
        late.computeIfAbsent(request, r -> new Late());
    }

    /**
     * Follows a create whose answer we stopped waiting for.
     *
     * @param answer completes with the created node's stat, or null when nothing was created
     */
    void follow(LockRequest request, String path, CompletableFuture<Stat> answer) {
        Late entry = late.computeIfAbsent(request, r -> new Late());
        answer.whenComplete((stat, e) -> {
            if (stat != null) {
                entry.applied(path, stat);
            }
        });
    }

    /**
     * The acquisition is settled: every late node but the one granted is deleted, now or when
     * its answer arrives.
     *
     * @param kept the czxid of the node granted, or -1 when none was
     * @return whether the acquisition had late creates
     */
    boolean settle(LockRequest request, long kept) {
        Late entry = late.remove(request);
        if (entry != null) {
            entry.settle(kept);
        }
        return entry != null;
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
                deletes.delete(path, stat.getCzxid(), stat.getVersion(), stat.getEphemeralOwner());
            }
        }

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
                    deletes.delete(node.path(), node.stat().getCzxid(), node.stat().getVersion(),
                            node.stat().getEphemeralOwner());
                }
            }
        }
    }

    /** A node a late create made. */
    private record LateNode(String path, Stat stat) {
    }
}
