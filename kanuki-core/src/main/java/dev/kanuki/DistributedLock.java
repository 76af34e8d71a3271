package dev.kanuki;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.Lock;

/**
 * A named lock on a backend. Obtain one from {@link LockProvider#lock(String)}; it is a cheap
 * descriptor that holds nothing until acquired, and is safe to share between threads.
 *
 * <p>Two locks are {@linkplain Object#equals equal} when they are the same lock: the same store,
 * name and mode (exclusive, read, write or semaphore), whichever provider or call made them.
 *
 * <p>Not reentrant: a thread that acquires a lock it already holds waits for itself until its
 * timeout runs out. Within one JVM waiters are served first come, first served.
 */
public interface DistributedLock {

    /** {@return the lock's name, in the canonical (NFC) form {@link LockNames#validate} gives} */
    String name();

    /**
     * Makes one attempt, without waiting.
     *
     * @return a handle when the lock was free, empty when it is held
     * @throws LockBackendException when the backend fails
     * @throws IllegalStateException when the provider is closed
     */
    Optional<LockHandle> tryAcquire();

    /**
     * Waits up to {@code timeout} for the lock.
     *
     * @param timeout the longest wait; zero means one attempt
     * @return a handle, or empty when the timeout ran out
     * @throws LockBackendException when the backend fails
     * @throws IllegalStateException when the provider is closed, also while this waits
     * @throws LockException wrapping {@link InterruptedException} when the thread is interrupted;
     *     the interrupt flag is set again
     */
    Optional<LockHandle> tryAcquire(Duration timeout);

    /**
     * Waits up to {@code timeout} for the lock.
     *
     * @param timeout the longest wait
     * @return the handle; close it to release the lock
     * @throws LockTimeoutException when the timeout ran out (it names the holder when known)
     * @throws LockBackendException when the backend fails
     * @throws LockException wrapping {@link InterruptedException} when the thread is interrupted;
     *     the interrupt flag is set again; the wait leaves nothing behind (no place in line, no
     *     grant)
     * @throws IllegalStateException when the provider is closed, also while this waits
     */
    LockHandle acquire(Duration timeout);

    /**
     * Waits for the lock without blocking the calling thread. Waiters do not each take a
     * thread: a provider blocks at most {@code waitThreads} threads (a URI option, default 32)
     * in backends that wait by blocking, and waiters beyond that try again now and then (woken
     * early when the backend notifies changes or a blocking thread frees); backends that poll
     * use no thread while waiting. The future's callbacks run on the thread that hands over the
     * lock (often the releasing thread, or a kanuki worker thread).
     *
     * @param timeout the longest wait
     * @return a future completed with the handle, or exceptionally with
     *     {@link LockTimeoutException}, {@link LockBackendException}, or
     *     {@link IllegalStateException} when the provider closes while it waits. Cancelling it
     *     gives up the wait; a handle that arrives after cancellation is released.
     * @throws IllegalStateException when the provider is already closed
     */
    CompletableFuture<LockHandle> acquireAsync(Duration timeout);

    /**
     * This lock with a maximum hold: an acquisition made through the returned lock is taken away
     * when it has been held for {@code maxHold}, counted from when it was granted. Then its
     * handle stops renewing, {@link LockHandle#lost()} completes with a {@link LockLostException}
     * that says so, {@link LockHandle#isHeld()} turns false, {@link LockHandle#verify()} throws it,
     * and the lock is released, so that the next holder (whose fencing token is higher) can take
     * it. The returned lock is the same lock ({@link Object#equals equal}, one line of waiters);
     * only its acquisitions are limited.
     *
     * @param maxHold the longest an acquisition may be held; more than zero
     * @return this lock with the limit
     * @throws IllegalArgumentException when {@code maxHold} is zero or negative
     */
    default DistributedLock withMaxHold(Duration maxHold) {
        return withMaxHold(maxHold, false);
    }

    /**
     * Like {@link #withMaxHold(Duration)}; with {@code interruptHolder}, the thread that acquired
     * the lock ({@code acquire}, {@code tryAcquire}, {@code asJavaLock().lock()}) is also
     * interrupted when the maximum hold passes, before the lock is released. An acquisition
     * through {@link #acquireAsync} has no such thread: only its handle is ended.
     *
     * @param maxHold the longest an acquisition may be held; more than zero
     * @param interruptHolder whether to interrupt the thread that acquired it
     * @return this lock with the limit
     * @throws IllegalArgumentException when {@code maxHold} is zero or negative
     */
    DistributedLock withMaxHold(Duration maxHold, boolean interruptHolder);

    /**
     * A {@link Lock} view for code that expects one. {@code lock()} waits without limit;
     * {@code unlock()} must be called by the thread that locked; conditions are not supported.
     *
     * @return a view backed by this lock
     */
    Lock asJavaLock();
}
