package dev.kanuki;

import java.util.concurrent.CompletableFuture;

/**
 * One term of a leader in a {@link LeaderElection}: from the moment the candidate was elected
 * until its leadership ended. Thread-safe.
 */
public final class Leadership {

    /** Why a leadership ended. */
    public enum End {
        /**
         * The election's lock was lost: a lease that could not be renewed (the backend gone or
         * unreachable, a pause longer than the lease), a session that ended, a lock removed
         * behind the holder. The candidate stands again.
         */
        LOST,
        /** The candidate left the election ({@link LeaderElection#resign()} or {@code close()}). */
        RESIGNED,
        /** The provider the election runs on was closed (also at JVM exit); the candidate does not stand again. */
        PROVIDER_CLOSED
    }

    private final String election;
    private final long epoch;
    private final LockHandle handle;
    private final CompletableFuture<End> ended = new CompletableFuture<>();
    /** Set when the term ends, before the candidate is told; {@link #ended} completes after. */
    private volatile End over;

    Leadership(String election, long epoch, LockHandle handle) {
        this.election = election;
        this.epoch = epoch;
        this.handle = handle;
    }

    /** {@return the election's name} */
    public String election() {
        return election;
    }

    /**
     * {@return the term's number: the fencing token of the election's lock, strictly greater
     *     than every earlier leader's epoch of the same election on the same backend}
     */
    public long epoch() {
        return epoch;
    }

    /**
     * {@return true while this term lasts, as far as this JVM knows (a cheap local check; see
     *     {@link #verify()})}
     */
    public boolean isCurrent() {
        return over == null && handle.isHeld();
    }

    /**
     * Checks with the backend that this term still lasts: call it just before making a leader's
     * decision visible.
     *
     * @throws LockLostException when it no longer does
     * @throws LockBackendException when the backend cannot be asked
     */
    public void verify() {
        End why = over;
        if (why != null) {
            throw new LockLostException(handle.name(), "the leadership of epoch " + epoch + " ended (" + why + ")", null);
        }
        handle.verify();
    }

    /**
     * {@return a future completed with the reason when this term ends, after the candidate's
     *     {@link LeaderCandidate#revoked} returned; owned by the caller}
     */
    public CompletableFuture<End> ended() {
        return ended.copy();
    }

    /** Marks the term over (the election's thread, before {@code revoked}). */
    void over(End why) {
        over = why;
    }

    /** Completes {@link #ended()} (the election's thread, after {@code revoked}). */
    void end(End why) {
        over = why;
        ended.complete(why);
    }

    @Override
    public String toString() {
        return "Leadership[" + dev.kanuki.spi.SafeNames.printable(election) + ", epoch " + epoch
                + (over != null ? ", ended " + over : "") + "]";
    }
}
