package dev.kanuki.zookeeper;

import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.SafeNames;
import java.util.ArrayList;
import java.util.List;

/**
 * Where a provider's nodes live under its prefix: lock nodes in {@code PREFIX/lock}, wait queues
 * in {@code PREFIX/queue}, semaphore permits in {@code PREFIX/permit}. A name maps to its
 * {@link SafeNames#stem stem} (a readable prefix and 128 bits of its SHA-256: bounded, no
 * {@code /}); a semaphore's stem is taken in another namespace, so a lock and a semaphore of one
 * name are unrelated.
 *
 * @param lockDir {@code PREFIX/lock}
 * @param queueDir {@code PREFIX/queue}
 * @param permitDir {@code PREFIX/permit}
 */
record NodePaths(String lockDir, String queueDir, String permitDir) {

    static NodePaths under(String prefix) {
        return new NodePaths(prefix + "/lock", prefix + "/queue", prefix + "/permit");
    }

    /** {@return the lock node of a name} */
    String lock(String name) {
        return lockDir + "/" + SafeNames.stem(name, "L");
    }

    /** {@return the wait queue of a request's name: its lock's, or its semaphore's} */
    String queue(LockRequest request) {
        return request.mode() == LockMode.PERMIT ? queueDir + "/" + SafeNames.stem(request.name(), "S")
                : lockQueue(request.name());
    }

    /** {@return the wait queue of a lock name} */
    String lockQueue(String name) {
        return queueDir + "/" + SafeNames.stem(name, "L");
    }

    /** {@return the nodes a request may take itself: the lock's node, or one node per semaphore permit} */
    List<String> nodes(LockRequest request) {
        if (request.mode() != LockMode.PERMIT) {
            return List.of(lock(request.name()));
        }
        String stem = permitDir + "/" + SafeNames.stem(request.name(), "S") + ".";
        List<String> out = new ArrayList<>(request.permits());
        for (int slot = 0; slot < request.permits(); slot++) {
            out.add(stem + slot);
        }
        return out;
    }

    /** {@return the parent of a node} */
    static String parent(String node) {
        return node.substring(0, node.lastIndexOf('/'));
    }
}
