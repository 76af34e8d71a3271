package dev.kanuki;

/**
 * Base class of every exception kanuki throws about a lock. Unchecked, so that
 * {@code try (LockHandle h = lock.acquire(timeout)) { ... }} reads naturally.
 */
public class LockException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * Makes the exception.
     *
     * @param message what happened, in words a user can act on
     * @param cause the underlying failure, or {@code null}
     */
    public LockException(String message, Throwable cause) {
        super(message, cause);
    }
}
