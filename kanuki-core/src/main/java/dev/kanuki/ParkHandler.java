package dev.kanuki;

import java.util.List;

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
 *
 * <p>A handler whose effect is costly to make durable (an {@code fsync}, a commit) can override
 * {@link #applyAll} to apply a whole claimed batch and make it durable once: the holder then pays
 * one durable write for many parked items, which is what makes parking faster than waiting.
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

    /**
     * Applies a batch of parked items claimed together, in the list's order (sorted by id, so
     * each producer's items in the order offered), and makes their effects durable once.
     *
     * <p>Returning normally means every item's effect is durable: all of them are then removed
     * from the spool. Throwing means none of them is known to be applied: the holder then runs the
     * same items one by one through {@link #apply}, so that a failing item is isolated, its
     * failures counted against its own attempts (the batch's failure counts against none) and
     * dead-lettered as with {@code apply} alone, while the others are applied. A batch that threw
     * after applying part of its items is therefore applied again in part: the idempotency rule
     * (record {@link ParkedItem#id()} with the effect, skip ids recorded) covers it, as it covers
     * a holder that died mid-batch, whose claimed items go to the next holder.
     *
     * <p>The holder calls this only for a handler that overrides it, and only while its lock is
     * held; the items' attempts may be above 0 (earlier failures). The default applies each item
     * with {@link #apply} in order.
     *
     * @param items the claimed items, in id order; never empty
     * @param fencingToken the fencing token of the acquisition they run under
     * @throws Exception when the batch could not be applied as a whole
     */
    default void applyAll(List<ParkedItem> items, long fencingToken) throws Exception {
        for (ParkedItem item : items) {
            apply(item, fencingToken);
        }
    }
}
