package dev.kanuki;

import dev.kanuki.spi.Durations;
import dev.kanuki.spi.SafeNames;
import java.time.Duration;
import java.util.Optional;

/**
 * The lock was not obtained before the timeout ran out. Nothing is held when this is thrown.
 */
public class LockTimeoutException extends LockException {
    private static final long serialVersionUID = 1L;

    /** The lock that could not be obtained. */
    private final String lockName;
    /** How long the caller waited. */
    private final Duration timeout;
    private final transient OwnerInfo holder;

    /**
     * Makes the exception for a wait that ran out.
     *
     * @param lockName the lock that could not be obtained
     * @param timeout how long the caller waited
     * @param holder who held the lock when the wait ended, or {@code null} when unknown
     */
    public LockTimeoutException(String lockName, Duration timeout, OwnerInfo holder) {
        super(message(lockName, timeout, holder), null);
        this.lockName = lockName;
        this.timeout = timeout;
        this.holder = holder;
    }

    private static String message(String lockName, Duration timeout, OwnerInfo holder) {
        String base = "lock '" + SafeNames.printable(lockName) + "' not obtained within " + Durations.format(timeout);
        return holder == null ? base : base + "; held by " + holder.describe();
    }

    /** {@return the name of the lock that could not be obtained} */
    public String lockName() {
        return lockName;
    }

    /** {@return how long the caller waited} */
    public Duration timeout() {
        return timeout;
    }

    /** {@return who held the lock when the wait ended, when the backend records owners} */
    public Optional<OwnerInfo> holder() {
        return Optional.ofNullable(holder);
    }
}
