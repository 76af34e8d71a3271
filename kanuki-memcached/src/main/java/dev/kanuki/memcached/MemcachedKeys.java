package dev.kanuki.memcached;

import dev.kanuki.spi.SafeNames;

/**
 * The keys of one lock name. Any name (any Unicode, spaces, 1024 characters) maps to short keys
 * memcached accepts (at most 250 bytes, no spaces or control characters):
 * {@code kanuki.lock.DIGEST} (the lock item, whose value is the owner record with the real name)
 * and {@code kanuki.fence.DIGEST} (the name's fencing counter), DIGEST being 128 bits of the
 * SHA-256 of the name as 32 hex digits. The digest also places the name on the hash ring.
 *
 * @param digest the name's digest
 * @param lock the lock item's key
 * @param fence the fencing counter's key
 */
record MemcachedKeys(String digest, String lock, String fence) {
    static final String LOCK_PREFIX = "kanuki.lock.";
    static final String FENCE_PREFIX = "kanuki.fence.";

    static MemcachedKeys of(String name) {
        return ofDigest(SafeNames.hash(name));
    }

    /**
     * @param lockKey a key found on a server
     * @return its name's keys, or {@code null} when it is not a lock key of ours
     */
    static MemcachedKeys ofLockKey(String lockKey) {
        if (!lockKey.startsWith(LOCK_PREFIX) || !lockKey.substring(LOCK_PREFIX.length()).matches("[0-9a-f]{32}")) {
            return null;
        }
        return ofDigest(lockKey.substring(LOCK_PREFIX.length()));
    }

    private static MemcachedKeys ofDigest(String digest) {
        return new MemcachedKeys(digest, LOCK_PREFIX + digest, FENCE_PREFIX + digest);
    }
}
