package dev.kanuki;

/**
 * A lock with a shared (read) mode and an exclusive (write) mode: any number of readers, or one
 * writer. The write lock is the same lock as {@link LockProvider#lock(String)} of the same name.
 * Within one JVM, requests are served in arrival order, so a waiting writer is not starved by
 * readers that arrive after it.
 */
public interface DistributedReadWriteLock {

    /** {@return the lock's name} */
    String name();

    /** {@return the shared mode: many holders at once, none while a writer holds} */
    DistributedLock readLock();

    /** {@return the exclusive mode: one holder, no readers} */
    DistributedLock writeLock();
}
