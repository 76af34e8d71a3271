package dev.kanuki;

/**
 * Applies one parked (or offered) item while its lock is held. Every process taking part in a
 * {@link ParkingLock} registers the same handler for the lock name: whichever process holds the
 * lock runs the items the others parked.
 *
 * <p>Delivery is at least once: an item whose holder died while handling it (or lost its lock)
 * is handed to the next holder again. To apply each item once, record {@link ParkedItem#id()} in
 * the same write as the item's effect and skip ids already recorded; or store
 * {@code fencingToken} with the data and refuse a write whose token is older than the stored
 * one ({@link FencedResource}). See {@code docs/park.md}.
 */
@FunctionalInterface
public interface ParkHandler {

    /**
     * Applies an item. Return normally only once its effect is durable: the item is then removed
     * from the spool. An exception counts as a failed attempt; the item is tried again, and after
     * the lock's maximum number of attempts it goes to the dead letters with the exception's text.
     *
     * @param item the item, with its id and the attempts that failed before
     * @param fencingToken the fencing token of the acquisition it runs under
     * @throws Exception when the item could not be applied
     */
    void apply(ParkedItem item, long fencingToken) throws Exception;
}
