package dev.kanuki;

import dev.kanuki.spi.SafeNames;

/**
 * A lock this process believed it held is no longer held: it was released, its lease ran out,
 * its session or connection ended, or its lock file was removed or replaced. Work done under the
 * lock must not be committed after this is thrown.
 */
public class LockLostException extends LockException {
    private static final long serialVersionUID = 1L;

    /** The lock that was lost. */
    private final String lockName;

    /**
     * Makes the exception.
     *
     * @param lockName the lock that was lost
     * @param reason why it is no longer held
     * @param cause the underlying failure, or {@code null}
     */
    public LockLostException(String lockName, String reason, Throwable cause) {
        super("lock '" + SafeNames.printable(lockName) + "' is no longer held: " + reason, cause);
        this.lockName = lockName;
    }

    /** {@return the name of the lock that was lost} */
    public String lockName() {
        return lockName;
    }
}
