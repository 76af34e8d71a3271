package dev.kanuki;

/**
 * What a backend can do. The contract suite skips, visibly and with a reason, what a backend
 * declares it cannot do; code can check these before asking for a read-write lock or a semaphore.
 *
 * @param leaseKind how a held lock is kept alive and freed when its holder dies
 * @param crossProcess whether the lock excludes other processes (false only for {@code mem:})
 * @param sharedLocks whether {@link LockProvider#readWriteLock} is supported
 * @param semaphores whether {@link LockProvider#semaphore} is supported
 * @param blockingWait whether waiting is woken by the backend (no polling)
 * @param persistentFencing whether fencing tokens keep increasing across restarts of all clients
 * @param ownerRecords whether the backend records who holds a lock
 */
public record Capabilities(
        LeaseKind leaseKind,
        boolean crossProcess,
        boolean sharedLocks,
        boolean semaphores,
        boolean blockingWait,
        boolean persistentFencing,
        boolean ownerRecords) {
}
