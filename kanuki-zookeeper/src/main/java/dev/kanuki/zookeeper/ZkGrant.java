package dev.kanuki.zookeeper;

import dev.kanuki.spi.Grant;

/**
 * One acquisition: the node that holds it (the lock node, a permit node, or the holder's own
 * place in the wait queue), its czxid (the fencing token) and version, the session that owns it,
 * and the connection epoch it was granted in.
 */
final class ZkGrant implements Grant {
    final String path;
    final long token;
    final int version;
    final long sessionId;
    final long epoch;
    /** The queue directory to remove when this holder leaves it empty, or null for a lock or permit node. */
    final String queueDir;
    volatile boolean lost;

    ZkGrant(String path, long token, int version, long sessionId, long epoch, String queueDir) {
        this.path = path;
        this.token = token;
        this.version = version;
        this.sessionId = sessionId;
        this.epoch = epoch;
        this.queueDir = queueDir;
    }

    @Override
    public long fencingToken() {
        return token;
    }
}
