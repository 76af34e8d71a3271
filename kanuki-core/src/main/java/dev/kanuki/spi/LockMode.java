package dev.kanuki.spi;

/** What a lock request asks for. */
public enum LockMode {
    /** The only holder of the name. */
    EXCLUSIVE,
    /** One of any number of readers; excludes {@link #EXCLUSIVE} holders. */
    SHARED,
    /** One permit of a counting semaphore; see {@link LockRequest#permits()}. */
    PERMIT
}
