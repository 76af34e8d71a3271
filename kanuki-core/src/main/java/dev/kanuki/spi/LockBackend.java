package dev.kanuki.spi;

import dev.kanuki.Capabilities;
import dev.kanuki.LockStatus;
import java.time.Duration;
import java.util.Optional;

/**
 * What a backend implements: a handful of primitive steps. Every method except
 * {@link #awaitAcquire} returns promptly. The engine does everything else, once for all
 * backends: deadlines, retry with backoff, the in-JVM per-name queue, lease renewal, lost-lock
 * detection, release at JVM exit.
 *
 * <p>The engine guarantees that within one JVM at most one thread at a time calls
 * {@code tryAcquire}/{@code awaitAcquire} for a given name and mode family, and never while this
 * JVM already holds that name exclusively; backends need no in-JVM locking of their own for
 * that. Shared holders of one JVM share a single grant.
 */
public interface LockBackend extends AutoCloseable {

    /** {@return what this backend can do} */
    Capabilities capabilities();

    /**
     * {@return an identity of the lock store: providers whose backends return equal scopes
     *     share one in-JVM queue per name (for example two providers on the same directory)}
     */
    String scope();

    /**
     * One non-blocking attempt.
     *
     * @param request what to acquire
     * @return the grant, or empty when the lock is held elsewhere
     * @throws dev.kanuki.LockBackendException when the backend fails
     */
    Optional<Grant> tryAcquire(LockRequest request);

    /**
     * Waits, woken by the backend rather than by polling, until the lock is obtained or
     * {@code maxWait} passes. Only called when {@link #blockingWait()} is true.
     *
     * @param request what to acquire
     * @param maxWait the longest wait
     * @return the grant, or empty when {@code maxWait} passed
     * @throws InterruptedException when the waiting thread is interrupted (the engine interrupts
     *     it to cancel the wait); nothing is held then
     */
    default Optional<Grant> awaitAcquire(LockRequest request, Duration maxWait) throws InterruptedException {
        throw new UnsupportedOperationException(getClass().getName() + " cannot wait by blocking");
    }

    /**
     * Whether {@link #awaitAcquire} is implemented: waiting is woken by the backend (a kernel
     * lock, a server's blocking call) instead of by polling. The engine then parks a bounded
     * number of threads per provider in {@code awaitAcquire}; waiters beyond that bound retry
     * with {@link #tryAcquire} (woken by {@link #watchChanges} where the backend has it).
     *
     * @return false (the default): the engine polls with backoff
     */
    default boolean blockingWait() {
        return false;
    }

    /**
     * Optional wake-up for waiters that cannot block in the backend: asks the backend to call
     * {@code onChange} when the lock's state may have changed (a holder released, an entry was
     * removed), so a polling waiter retries at once instead of after its pause. Spurious calls
     * are allowed; missing a change is not, once this method has returned (the engine makes one
     * more attempt after subscribing, so a change just before it is not lost either). A timer
     * still retries now and then: a dead holder's lease runs out without any change.
     *
     * <p>{@code onChange} may run on any thread, must return quickly and must not call the
     * backend; the engine only schedules an attempt from it.
     *
     * @param request the request that waits
     * @param onChange what to call on a change
     * @return the registration, or null when this backend cannot notify (the default)
     */
    default ChangeSubscription watchChanges(LockRequest request, Runnable onChange) {
        return null;
    }

    /**
     * Tells the backend that the engine gave up on a request that contended but got no grant
     * (timeout, cancellation, failure), so it can drop any place it keeps for it (the queue
     * strategy's line in the queue file). Called once per given-up request; must not throw.
     *
     * @param request the request given up
     */
    default void abandon(LockRequest request) {
    }

    /**
     * Whether the engine should make a {@link #tryAcquire} attempt before a blocking
     * {@link #awaitAcquire}. Backends whose blocking wait returns at once when the lock is free,
     * for the same cost as a try, return false and save the extra attempt on every contended
     * acquisition.
     *
     * @return true (the default) to try first
     */
    default boolean tryBeforeWait() {
        return true;
    }

    /**
     * Releases a grant. Must not throw when the lock was already lost.
     *
     * @param grant a grant from this backend
     */
    void release(Grant grant);

    /**
     * Extends a ttl lease. Session backends need not override it.
     *
     * @param grant a grant from this backend
     * @param lease the new lease, from now
     * @return false when the lock was found lost
     */
    default boolean renew(Grant grant, Duration lease) {
        return verify(grant);
    }

    /**
     * Checks with the store that the grant is still held.
     *
     * @param grant a grant from this backend
     * @return false when it is not
     * @throws dev.kanuki.LockBackendException when the store cannot be asked
     */
    boolean verify(Grant grant);

    /**
     * Who holds a lock now, without taking it. The engine calls it to name the holder in
     * timeout messages, and {@code kanuki status} to list locks.
     *
     * @param name a lock name
     * @return what the backend can tell
     */
    LockStatus status(String name);

    /**
     * Lists the locks the backend can enumerate (held, stale or recently used), for
     * {@code kanuki status} without names.
     *
     * @return what it found
     * @throws UnsupportedOperationException when the backend cannot enumerate its locks
     */
    default java.util.List<LockStatus> list() {
        throw new UnsupportedOperationException("this backend cannot list its locks; ask for names");
    }

    /**
     * Removes a lock that its owner can no longer release, with the backend's safe protocol.
     *
     * @param name the lock's name
     * @param force also remove a live lock
     * @return the lock's status just before it was broken
     * @throws IllegalStateException when the lock is live and {@code force} is false, naming the owner
     * @throws UnsupportedOperationException when the backend's locks cannot be broken from outside
     */
    default LockStatus breakLock(String name, boolean force) {
        throw new UnsupportedOperationException("this backend's locks are released by the backend itself"
                + " when their holder dies; stop the holder instead");
    }

    /**
     * Removes what locks nobody holds left behind in the store: files of a holder that crashed
     * (a killed {@code os} holder's lock file, a stale {@code mkdir} directory...), with the
     * same safe protocol as {@link #breakLock} (a lock held, or taken afresh while it works, is
     * never removed). Safe to call while other processes lock and unlock.
     *
     * @param dryRun only report what would be removed
     * @return what was removed (or would be), one entry per artefact, as the store names it (a path)
     * @throws UnsupportedOperationException when the backend leaves nothing behind to prune (the default)
     * @throws dev.kanuki.LockBackendException when the store fails
     */
    default java.util.List<String> prune(boolean dryRun) {
        throw new UnsupportedOperationException("this backend leaves nothing behind to prune");
    }

    /**
     * The spool this backend's store keeps for parking locks ({@link dev.kanuki.LockProvider#spool()}),
     * or null when it keeps none (the default). Closed by the backend's {@link #close()}.
     *
     * @return the spool, or null
     */
    default WorkSpool spool() {
        return null;
    }

    /** Frees the backend's resources. Grants still held are released by the engine first. */
    @Override
    void close();
}
