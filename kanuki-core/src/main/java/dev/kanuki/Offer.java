package dev.kanuki;

import java.util.Objects;

/**
 * What {@link ParkingLock#offer} did with an item: applied it at once under the lock, or parked
 * it durably for the lock's next holder.
 *
 * @param outcome applied or parked
 * @param itemId the item's id (the handler sees the same id, wherever it runs)
 * @param fencingToken the token the item was applied under; 0 when parked
 */
public record Offer(Outcome outcome, String itemId, long fencingToken) {

    /** Applied now, or parked. */
    public enum Outcome {
        /** The offering call took the lock and its handler returned for the item. */
        APPLIED,
        /** The lock was busy (or the handler failed on the first try): the item waits in the spool. */
        PARKED
    }

    /**
     * Checks the fields.
     *
     * @param outcome applied or parked
     * @param itemId the item's id
     * @param fencingToken the token when applied
     */
    public Offer {
        Objects.requireNonNull(outcome, "outcome");
        Objects.requireNonNull(itemId, "itemId");
    }

    /** {@return true when the item was applied by this call} */
    public boolean applied() {
        return outcome == Outcome.APPLIED;
    }

    /** {@return true when the item was parked for the lock's next holder} */
    public boolean parked() {
        return outcome == Outcome.PARKED;
    }
}
