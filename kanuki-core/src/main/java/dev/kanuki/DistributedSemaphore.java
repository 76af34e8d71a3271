package dev.kanuki;

/**
 * A counting semaphore: at most {@link #permits()} holders at once, across processes. Each
 * acquisition takes one permit; closing the handle returns it. Semaphores live in their own
 * namespace: {@code semaphore("x", n)} and {@code lock("x")} are unrelated.
 */
public interface DistributedSemaphore extends DistributedLock {

    /** {@return the number of permits; every user of the same name must pass the same number} */
    int permits();
}
