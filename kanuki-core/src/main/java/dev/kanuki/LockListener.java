package dev.kanuki;

/**
 * Told what happens to the locks of a provider: for metrics, tracing and audit logs. Register
 * one with {@link LockProvider#addListener(LockListener)}; the optional {@code kanuki-micrometer}
 * module has one that records Micrometer meters and observations.
 *
 * <p>Every acquisition started while a listener is registered produces, in this order: one
 * {@link LockEvent.Kind#WAITING WAITING} event, one outcome ({@link LockEvent.Kind#ACQUIRED
 * ACQUIRED}, {@link LockEvent.Kind#REFUSED REFUSED}, {@link LockEvent.Kind#TIMED_OUT TIMED_OUT} or
 * {@link LockEvent.Kind#FAILED FAILED}) and, after {@code ACQUIRED}, at most one
 * {@link LockEvent.Kind#LOST LOST} and one {@link LockEvent.Kind#RELEASED RELEASED} event. All
 * events of one acquisition carry the same {@link LockEvent#acquisition()} number and go to the
 * listeners that were registered when it started; an acquisition started earlier produces no
 * events.
 *
 * <p>Events are delivered synchronously, on the thread where they happen: {@code WAITING} on the
 * thread that calls {@code acquire}/{@code tryAcquire}/{@code acquireAsync}; {@code ACQUIRED} on
 * the thread that hands over the lock, which is the caller's own when the lock was free (for a
 * waiter that was queued, the releasing thread or a kanuki worker), never while the engine holds
 * an internal monitor; {@code RELEASED} on the thread that closes the handle, after the backend
 * released the lock; {@code LOST} on the thread that found out (the lease watchdog, a check).
 * The events of one acquisition reach a listener one at a time and in the order above, also when
 * they happen on different threads at once (a maximum hold passing while {@code ACQUIRED} is
 * still being delivered: {@code LOST} waits for it). A listener must be quick and must not block,
 * nor acquire kanuki locks. A listener that
 * throws is logged (SLF4J, logger {@code dev.kanuki.engine.EngineEvents}) and the lock goes on as
 * if it had not been called.
 */
@FunctionalInterface
public interface LockListener {

    /**
     * Called for every event of the acquisitions this listener sees.
     *
     * @param event what happened
     */
    void onEvent(LockEvent event);

    /**
     * Called with an acquisition's {@link LockEvent.Kind#WAITING WAITING} event instead of
     * {@link #onEvent}; the listener it returns is told the acquisition's later events. A listener
     * that keeps something per acquisition (a timer's start, a trace span) returns a new object
     * holding it, rather than keeping a map from {@link LockEvent#acquisition()} to it. The
     * default calls {@code onEvent(waiting)} and returns this listener.
     *
     * @param waiting the {@code WAITING} event
     * @return the listener of this acquisition's other events, or null for none; when this method
     *     throws, this listener is told them
     */
    default LockListener onWaiting(LockEvent waiting) {
        onEvent(waiting);
        return this;
    }
}
