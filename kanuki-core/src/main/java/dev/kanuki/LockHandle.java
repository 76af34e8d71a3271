package dev.kanuki;

import java.util.concurrent.CompletableFuture;

/**
 * Proof that a lock is held. Close it to release the lock; closing twice does nothing.
 *
 * <p>Handles are not reentrant: acquiring a lock that this JVM already holds waits like any
 * other contender, even from the same thread. A handle may be closed from any thread.
 */
public interface LockHandle extends AutoCloseable {

    /** {@return the name of the lock this handle holds} */
    String name();

    /**
     * A number that is strictly greater than the token of every earlier exclusive holder of the
     * same name on the same backend, across processes. Pass it to the resource you protect so it
     * can refuse writes from a holder whose lock has since been lost ("fencing"). Shared (read)
     * holders see the token of the last exclusive holder that asked for one.
     *
     * <p>Database servers ({@code postgresql://}, {@code mysql://}), Redis (for exclusive locks)
     * and memcached issue the token on the first call, with a write that also checks the lock is
     * still held; a lock whose holder never asks costs no such write (and names whose holders do
     * ask get it with the acquisition). There, ask while holding the lock: after {@link #close()}
     * a token that was never asked for cannot be issued. Other backends issue it while acquiring.
     *
     * @return the fencing token of this acquisition
     * @throws LockLostException when the token is issued on demand and the lock was lost
     * @throws IllegalStateException when the token is issued on demand and is first asked for
     *     after the handle was closed
     * @throws LockBackendException when the token is issued on demand and the backend cannot be asked
     */
    long fencingToken();

    /**
     * {@return true while this handle is open and its lock is not known to be lost; a cheap local
     *     check with no round trip (see {@link #verify()})}
     */
    boolean isHeld();

    /**
     * Checks with the backend that the lock is still held by this handle ("re-check before
     * commit"). Call it just before making the protected work visible.
     *
     * @throws LockLostException when the lock is no longer held, or the handle was closed
     * @throws LockBackendException when the backend cannot be asked
     */
    void verify();

    /**
     * A future completed (with the reason) when kanuki notices the lock was lost while this
     * handle was open: a lease that could not be renewed, a session that ended, a lock file
     * removed, a maximum hold that passed ({@link DistributedLock#withMaxHold}). It is never
     * completed by {@link #close()}.
     *
     * <p>A lost handle still counts as this JVM's holder of the name until it is closed (other
     * threads here keep waiting): close it when you stop the work it protected.
     *
     * @return a future owned by the caller; completing it has no effect on the lock
     */
    CompletableFuture<LockLostException> lost();

    /** Releases the lock. Idempotent; never throws for a lock that was already lost. */
    @Override
    void close();
}
