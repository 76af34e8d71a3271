package dev.kanuki;

import dev.kanuki.spi.LockMode;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;

/**
 * One thing that happened to an acquisition of a lock, as a {@link LockListener} is told.
 *
 * <p>Immutable. Times are measured on this JVM's monotonic clock ({@link System#nanoTime()}).
 */
public final class LockEvent {

    /** What happened. */
    public enum Kind {
        /** An acquisition starts: {@code acquire}, {@code tryAcquire} or {@code acquireAsync} was called. */
        WAITING,
        /** The acquisition got the lock; {@link #waited()} is how long it took. */
        ACQUIRED,
        /** A single attempt ({@code tryAcquire()}, or a zero timeout) found the lock busy. */
        REFUSED,
        /** The wait ran out before the lock was free; {@link #error()} is the {@link LockTimeoutException}. */
        TIMED_OUT,
        /**
         * The acquisition ended otherwise: the backend failed, the provider was closed, the thread
         * was interrupted, the future was cancelled; {@link #error()} says which.
         */
        FAILED,
        /**
         * The lock was found lost while held (lease not renewed, session ended, lock file removed,
         * maximum hold passed); {@link #held()} runs to that moment and {@link #error()} is the
         * {@link LockLostException}. A {@link #RELEASED} event follows when the handle is closed.
         */
        LOST,
        /** The handle was closed and the backend released the lock; {@link #held()} is how long it was held. */
        RELEASED
    }

    private final Kind kind;
    private final long acquisition;
    private final String name;
    private final String scheme;
    private final LockMode mode;
    // Nanoseconds, not Durations: the engine makes events on every acquisition, and a listener
    // that records them (a Micrometer timer takes nanoseconds) then allocates nothing to read them.
    private final long waitedNanos;
    private final long heldNanos;
    private final Throwable error;

    /**
     * Makes an event (the engine does; public so that listeners can be tested).
     *
     * @param kind what happened
     * @param acquisition the number of the acquisition, the same for all its events
     * @param name the lock's name
     * @param scheme the backend's URI scheme, e.g. {@code file}, {@code redis}
     * @param mode exclusive (also a read-write lock's write lock), shared (its read lock) or a semaphore permit
     * @param waited how long the acquisition waited (zero for {@link Kind#WAITING})
     * @param held how long the lock was held ({@link Kind#LOST}, {@link Kind#RELEASED}), else zero
     * @param error the failure, for {@link Kind#TIMED_OUT}, {@link Kind#FAILED} and {@link Kind#LOST}; else null
     */
    public LockEvent(Kind kind, long acquisition, String name, String scheme, LockMode mode, Duration waited,
                     Duration held, Throwable error) {
        this(kind, acquisition, name, scheme, mode, nanos(Objects.requireNonNull(waited, "waited")),
                nanos(Objects.requireNonNull(held, "held")), error);
    }

    /**
     * Makes an event with its times in nanoseconds (the engine does, allocating no {@link Duration}).
     *
     * @param kind what happened
     * @param acquisition the number of the acquisition, the same for all its events
     * @param name the lock's name
     * @param scheme the backend's URI scheme
     * @param mode how the lock is taken
     * @param waitedNanos how long the acquisition waited, in nanoseconds (negative is taken as zero)
     * @param heldNanos how long the lock was held, in nanoseconds (negative is taken as zero)
     * @param error the failure, for {@link Kind#TIMED_OUT}, {@link Kind#FAILED} and {@link Kind#LOST}; else null
     */
    public LockEvent(Kind kind, long acquisition, String name, String scheme, LockMode mode, long waitedNanos,
                     long heldNanos, Throwable error) {
        this.kind = Objects.requireNonNull(kind, "kind");
        this.acquisition = acquisition;
        this.name = Objects.requireNonNull(name, "name");
        this.scheme = Objects.requireNonNull(scheme, "scheme");
        this.mode = Objects.requireNonNull(mode, "mode");
        this.waitedNanos = Math.max(0, waitedNanos);
        this.heldNanos = Math.max(0, heldNanos);
        this.error = error;
    }

    /** A duration in nanoseconds, saturated (about 292 years) rather than overflowing. */
    private static long nanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException tooLong) {
            return d.isNegative() ? 0 : Long.MAX_VALUE;
        }
    }

    /** {@return what happened} */
    public Kind kind() {
        return kind;
    }

    /**
     * {@return a number that identifies the acquisition within this JVM: all its events carry it,
     *     so that a listener can match a wait's end and a hold's end to their start}
     */
    public long acquisition() {
        return acquisition;
    }

    /** {@return the lock's name (canonical form, see {@link LockNames})} */
    public String name() {
        return name;
    }

    /** {@return the backend's URI scheme, e.g. {@code mem}, {@code file}, {@code redis}} */
    public String scheme() {
        return scheme;
    }

    /** {@return how the lock is taken: exclusive, shared (read) or a semaphore permit} */
    public LockMode mode() {
        return mode;
    }

    /** {@return how long the acquisition waited: until this event, or until it got the lock} */
    public Duration waited() {
        return Duration.ofNanos(waitedNanos);
    }

    /** {@return {@link #waited()} in nanoseconds} */
    public long waitedNanos() {
        return waitedNanos;
    }

    /** {@return how long the lock was held, for {@link Kind#LOST} and {@link Kind#RELEASED}; else zero} */
    public Duration held() {
        return Duration.ofNanos(heldNanos);
    }

    /** {@return {@link #held()} in nanoseconds} */
    public long heldNanos() {
        return heldNanos;
    }

    /** {@return the failure of a {@link Kind#TIMED_OUT}, {@link Kind#FAILED} or {@link Kind#LOST} event} */
    public Optional<Throwable> error() {
        return Optional.ofNullable(error);
    }

    @Override
    public String toString() {
        return "LockEvent[" + kind + " #" + acquisition + " '" + dev.kanuki.spi.SafeNames.printable(name) + "' "
                + scheme + " " + mode + " waited " + waited() + " held " + held()
                + (error == null ? "" : " " + error.getClass().getSimpleName()) + "]";
    }
}
