package dev.kanuki;

/**
 * The backend failed: a directory is not writable, a disk is full, a server is down, a lock
 * file is corrupted. The message says what happened; {@link #hint()} says what to do about it.
 */
public class LockBackendException extends LockException {
    private static final long serialVersionUID = 1L;

    /** What the user can do about the failure. */
    private final String hint;

    /**
     * Makes the exception.
     *
     * @param message what happened, naming the path, host or lock involved
     * @param hint what the user can do about it
     * @param cause the underlying failure, or {@code null}
     */
    public LockBackendException(String message, String hint, Throwable cause) {
        super(hint == null || hint.isEmpty() ? message : message + " (" + hint + ")", cause);
        this.hint = hint == null ? "" : hint;
    }

    /** {@return what the user can do about the failure; empty when there is nothing to suggest} */
    public String hint() {
        return hint;
    }
}
