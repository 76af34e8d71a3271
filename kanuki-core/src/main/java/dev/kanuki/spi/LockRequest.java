package dev.kanuki.spi;

import dev.kanuki.OwnerInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * One acquisition request as the engine passes it to a backend. The same request object is
 * passed to every attempt of one acquisition, so its owner id stays the same across retries.
 */
public final class LockRequest {
    private final String name;
    private final LockMode mode;
    private final int permits;
    private final Duration lease;
    private final long deadlineNanos;
    private OwnerInfo owner;
    private volatile Duration retryAfter;

    /** The least time {@link #callTimeout} gives one call, so that a try without waiting still gets one round trip. */
    static final Duration MIN_CALL = Duration.ofSeconds(1);
    private static final long NO_DEADLINE = Long.MAX_VALUE;

    /**
     * Makes a request without a deadline.
     *
     * @param name the validated lock name
     * @param mode exclusive, shared or one semaphore permit
     * @param permits the semaphore's size for {@link LockMode#PERMIT}, else 1
     * @param lease the lease ttl backends must give the lock; session backends ignore it
     */
    public LockRequest(String name, LockMode mode, int permits, Duration lease) {
        this(name, mode, permits, lease, NO_DEADLINE);
    }

    /**
     * Makes a request with the caller's deadline.
     *
     * @param name the validated lock name
     * @param mode exclusive, shared or one semaphore permit
     * @param permits the semaphore's size for {@link LockMode#PERMIT}, else 1
     * @param lease the lease ttl backends must give the lock; session backends ignore it
     * @param deadlineNanos the caller's deadline on the {@link System#nanoTime()} clock, or
     *     {@link Long#MAX_VALUE} for none
     */
    public LockRequest(String name, LockMode mode, int permits, Duration lease, long deadlineNanos) {
        this.name = Objects.requireNonNull(name);
        this.mode = Objects.requireNonNull(mode);
        this.permits = permits;
        this.lease = Objects.requireNonNull(lease);
        this.deadlineNanos = deadlineNanos;
    }

    /**
     * {@return the time left before the caller's deadline (zero once it passed, and for a try
     *     without waiting); {@code Duration.ofNanos(Long.MAX_VALUE)} when the caller gave none}
     */
    public Duration timeLeft() {
        if (deadlineNanos == NO_DEADLINE) {
            return Duration.ofNanos(Long.MAX_VALUE);
        }
        return Duration.ofNanos(Math.max(0, deadlineNanos - System.nanoTime()));
    }

    /**
     * How long one call to the store for this request may take, so that the caller's deadline,
     * not a client library's retries, decides: the backend's own per-call timeout, cut to the
     * time left before the caller's deadline, but never below one second (a try without waiting,
     * or the last attempt before the deadline, still gets one round trip on a slow network).
     *
     * @param backendTimeout the backend's per-call timeout (its {@code timeout} option)
     * @return the smaller of the two, at least one second unless {@code backendTimeout} is less
     */
    public Duration callTimeout(Duration backendTimeout) {
        Duration left = timeLeft();
        Duration bounded = left.compareTo(MIN_CALL) < 0 ? MIN_CALL : left;
        return bounded.compareTo(backendTimeout) < 0 ? bounded : backendTimeout;
    }

    /** {@return the lock name; already checked against {@link dev.kanuki.LockNames}} */
    public String name() {
        return name;
    }

    /** {@return the mode requested} */
    public LockMode mode() {
        return mode;
    }

    /** {@return the semaphore's number of permits ({@link LockMode#PERMIT}), else 1} */
    public int permits() {
        return permits;
    }

    /** {@return the lease a ttl backend must give the lock} */
    public Duration lease() {
        return lease;
    }

    /**
     * The owner record for this acquisition, made on first use (backends that keep no owner
     * record pay nothing): this host, this pid, a random 128-bit id, now, and now + lease.
     *
     * @return the owner record, the same on every call for this request
     */
    public synchronized OwnerInfo owner() {
        if (owner == null) {
            Instant now = Instant.now();
            owner = new OwnerInfo(ProcessIdentity.host(), ProcessIdentity.pid(), ProcessIdentity.randomId(),
                    now, now.plus(lease));
        }
        return owner;
    }

    /**
     * Lets a backend say, from a {@link LockBackend#tryAcquire} that found the lock held, how long
     * the lock cannot become free unless a change is notified: typically the holder's remaining
     * lease, after which a crashed holder's lock expires. A waiter that gets change notifications
     * ({@link LockBackend#watchChanges}) then pauses that long instead of retrying on the
     * engine's backoff ramp; a waiter without them ignores the hint. Applies to the attempt that
     * gave it only.
     *
     * @param delay a positive duration; zero or negative values are ignored
     */
    public void retryAfter(Duration delay) {
        retryAfter = delay == null || delay.isNegative() || delay.isZero() ? null : delay;
    }

    /**
     * Reads and clears the hint of the last attempt (see {@link #retryAfter(Duration)}); for the
     * engine.
     *
     * @return the hint, or empty when the last attempt gave none
     */
    public Optional<Duration> takeRetryAfter() {
        Duration d = retryAfter;
        retryAfter = null;
        return Optional.ofNullable(d);
    }

    @Override
    public String toString() {
        return mode + " '" + SafeNames.printable(name) + "'";
    }
}
