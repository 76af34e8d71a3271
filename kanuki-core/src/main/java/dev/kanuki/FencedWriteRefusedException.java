package dev.kanuki;

/**
 * A {@link FencedResource} refused a write: it has already accepted one with a fencing token at
 * least as high, so the writer's lock was lost (its lease ran out while it was paused, it was
 * broken) and a newer holder wrote. Nothing was written.
 */
public class FencedWriteRefusedException extends LockException {
    private static final long serialVersionUID = 1L;
    /** What was written, as named in the message. */
    private final String resource;
    /** The refused writer's fencing token. */
    private final long token;
    /** The highest token the resource has accepted, or -1 when it does not say. */
    private final long newerToken;

    /**
     * Makes the exception for a write the resource refused.
     *
     * @param resource what was written, for the message
     * @param token the writer's fencing token
     * @param newerToken the highest token the resource has accepted, or -1 when it does not say
     */
    public FencedWriteRefusedException(String resource, long token, long newerToken) {
        super("write to " + resource + " refused: it has accepted fencing token "
                + (newerToken >= 0 ? Long.toString(newerToken) : "a higher one") + ", this writer's is " + token
                + " (its lock was lost and a newer holder wrote); nothing was written", null);
        this.resource = resource;
        this.token = token;
        this.newerToken = newerToken;
    }

    /** {@return what was written, as named when the resource was made} */
    public String resource() {
        return resource;
    }

    /** {@return the refused writer's fencing token} */
    public long token() {
        return token;
    }

    /** {@return the highest token the resource has accepted, or -1 when it does not say} */
    public long newerToken() {
        return newerToken;
    }
}
