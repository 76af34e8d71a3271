package dev.kanuki.zookeeper;

import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.SafeNames;
import dev.kanuki.zookeeper.ZooKeeperCalls.Read;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import org.apache.curator.framework.api.CuratorEvent;
import org.apache.zookeeper.KeeperException.Code;

/**
 * What {@code kanuki status}, {@code list} and {@code break} see of ZooKeeper locks: a lock is held
 * by the holder of its lock node (the fast path), or by the places at the front of its wait queue
 * (a writer, or the readers in a row).
 */
final class LockInspector {
    private final ZooKeeperCalls calls;
    private final NodePaths paths;
    private final WaitQueue queue;
    private final PendingReleases releases;

    LockInspector(ZooKeeperCalls calls, NodePaths paths, WaitQueue queue, PendingReleases releases) {
        this.calls = calls;
        this.paths = paths;
        this.queue = queue;
        this.releases = releases;
    }

    /** {@return the status of a lock: its lock node's holder, or its queue's} */
    LockStatus status(String name) {
        Read read = calls.await(calls.getData(paths.lock(name), null), "reading status");
        if (read.code() == Code.OK) {
            return OwnerRecord.statusOf(name, stateOf(paths.lock(name), LockStatus.State.HELD), read.data(), read.stat());
        }
        if (read.code() != Code.NONODE) {
            throw calls.failure(read.code(), "reading status");
        }
        return queueStatus(name, paths.lockQueue(name));
    }

    /**
     * @param name the lock's name, or null to read it from the first holder's record (listing)
     * @return the status of a lock held through its wait queue (by a writer: HELD; by readers:
     *     HELD_SHARED, naming the first); FREE without holders, or null when listing
     */
    private LockStatus queueStatus(String name, String dir) {
        for (QueueEntry holder : queue.holders(dir)) {
            Read read = calls.await(calls.getData(dir + "/" + holder.name(), null), "reading status");
            if (read.code() == Code.OK) {
                String recorded = name != null ? name : OwnerRecord.decodeName(read.data());
                LockStatus.State state = stateOf(dir + "/" + holder.name(),
                        holder.writer() ? LockStatus.State.HELD : LockStatus.State.HELD_SHARED);
                return recorded == null ? null : OwnerRecord.statusOf(recorded, state, read.data(), read.stat());
            }
        }
        return name == null ? null : new LockStatus(name, LockStatus.State.FREE, Optional.empty(), -1);
    }

    /**
     * @return STALE for a node this provider released but whose delete is still being retried (a
     *     leader election, a dropped connection): its holder is gone and the node goes soon
     */
    private LockStatus.State stateOf(String node, LockStatus.State held) {
        return releases.isPending(node) ? LockStatus.State.STALE : held;
    }

    /** {@return the held locks: lock nodes, and queues with holders} */
    List<LockStatus> list() {
        List<String> locks = children(paths.lockDir(), "listing");
        List<CompletableFuture<Read>> reads = new ArrayList<>();
        for (String child : locks) {
            reads.add(calls.getData(paths.lockDir() + "/" + child, null));
        }
        List<LockStatus> out = new ArrayList<>();
        for (CompletableFuture<Read> r : reads) {
            Read read = calls.await(r, "listing");
            String name = read.code() == Code.OK ? OwnerRecord.decodeName(read.data()) : null;
            if (name != null) {
                out.add(OwnerRecord.statusOf(name, stateOf(paths.lock(name), LockStatus.State.HELD), read.data(),
                        read.stat()));
            }
        }
        Set<String> held = new HashSet<>(locks);
        for (String dir : children(paths.queueDir(), "listing")) {
            if (!held.contains(dir)) {
                LockStatus status = queueStatus(null, paths.queueDir() + "/" + dir);
                if (status != null) {
                    out.add(status);
                }
            }
        }
        return out;
    }

    private List<String> children(String dir, String what) {
        Read read = calls.await(calls.getChildren(dir), what);
        if (read.code() == Code.NONODE) {
            return List.of();
        }
        if (read.code() != Code.OK) {
            throw calls.failure(read.code(), what);
        }
        return read.children();
    }

    /** Deletes a live lock's lock node and its queue's holders; only with {@code force}. */
    LockStatus breakLock(String name, boolean force) {
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
        List<String> nodes = new ArrayList<>(List.of(paths.lock(name)));
        queue.holders(paths.lockQueue(name)).forEach(holder -> nodes.add(paths.lockQueue(name) + "/" + holder.name()));
        for (String node : nodes) {
            CuratorEvent deleted = calls.await(ZooKeeperCalls.send(cb -> calls.client.delete().inBackground(cb).forPath(node)),
                    "breaking");
            Code code = Code.get(deleted.getResultCode());
            if (code != Code.OK && code != Code.NONODE) {
                throw calls.failure(code, "breaking");
            }
        }
        return before;
    }
}
