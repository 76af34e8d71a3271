package dev.kanuki.zookeeper;

import org.apache.zookeeper.KeeperException.Code;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

/**
 * A watch on one permit node, set again after each change until cancelled: ZooKeeper's watches
 * fire once. An exists watch fires on create, data change and delete (a release, or the expiry
 * of the holder's session).
 */
final class PermitWatch implements Watcher {
    private final ZooKeeperCalls calls;
    private final String path;
    private final Runnable onChange;
    private volatile boolean cancelled;

    PermitWatch(ZooKeeperCalls calls, String path, Runnable onChange) {
        this.calls = calls;
        this.path = path;
        this.onChange = onChange;
    }

    void arm() {
        if (cancelled) {
            return;
        }
        ZooKeeperCalls.send(cb -> calls.client.checkExists().usingWatcher(this).inBackground(cb).forPath(path))
                .whenComplete((r, e) -> {
                    if (e != null || (r.getResultCode() != Code.OK.intValue()
                            && r.getResultCode() != Code.NONODE.intValue())) {
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
