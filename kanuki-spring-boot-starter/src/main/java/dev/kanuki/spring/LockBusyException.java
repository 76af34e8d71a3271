package dev.kanuki.spring;

import dev.kanuki.LockException;
import java.time.Duration;
import java.util.Optional;

/**
 * A {@link Locked @Locked} method with {@code onBusy = THROW} did not run: its lock stayed busy
 * for the call's wait. In Spring MVC the starter answers it with {@code 409 Conflict} and a
 * {@code Retry-After} header.
 */
public class LockBusyException extends LockException {
    private static final long serialVersionUID = 1L;

    /** The lock's name. */
    private final String lockName;
    /** When to try again, or null when unknown. */
    private final Duration retryAfter;

    /**
     * Makes the exception.
     *
     * @param lockName the lock's name
     * @param message what happened
     * @param retryAfter when a retry may succeed, or {@code null} when unknown
     */
    public LockBusyException(String lockName, String message, Duration retryAfter) {
        super(message, null);
        this.lockName = lockName;
        this.retryAfter = retryAfter;
    }

    /** {@return the name of the busy lock} */
    public String lockName() {
        return lockName;
    }

    /** {@return when a retry may succeed, when known} */
    public Optional<Duration> retryAfter() {
        return Optional.ofNullable(retryAfter);
    }
}
