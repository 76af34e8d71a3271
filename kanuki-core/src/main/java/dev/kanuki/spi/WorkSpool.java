package dev.kanuki.spi;

import dev.kanuki.DeadLetter;
import dev.kanuki.ParkedItem;
import java.util.List;

/**
 * Where a {@link dev.kanuki.ParkingLock} parks work while its lock is busy: durable, per lock
 * name, shared by every process taking part. One spool serves any number of names.
 *
 * <p>An item lives in one of three places: <em>parked</em> (offered, not yet taken), <em>claimed</em>
 * (taken by the holder with a given fencing token, not yet finished) and <em>dead</em> (failed too
 * often). Only the lock's holder claims, completes and fails items, so the steps need not be safe
 * against concurrent holders beyond what a lost lock allows: a holder whose lock was lost may still
 * be running while the next holder takes its claimed items over; each move must therefore be one
 * atomic step, so that an item is in exactly one place.
 *
 * <p>Implementations are thread-safe.
 */
public interface WorkSpool extends AutoCloseable {

    /** {@return where the spool keeps its items, for messages (a directory, a server and key prefix)} */
    String describe();

    /**
     * Parks an item durably: when this returns, the item survives this process's death and is
     * visible whole to {@link #claim} (never half written), and before it returns it is not
     * visible at all.
     *
     * @param name the lock name (validated, NFC)
     * @param item the item with its id (unique) and attempts so far
     * @throws dev.kanuki.LockBackendException when the item could not be stored
     */
    void park(String name, ParkedItem item);

    /**
     * Takes items for the holder with {@code token}, in one atomic step per item: first every item
     * still claimed under an older token (its holder died or lost the lock mid-batch) or under this
     * token (claimed earlier and not finished), then parked ones, at most {@code max} in all.
     *
     * @param name the lock name
     * @param token the fencing token of the current acquisition
     * @param max the most items to return (at least 1)
     * @return the claimed items, sorted by {@link ParkedItem#id()}; empty when nothing waits
     */
    List<ParkedItem> claim(String name, long token, int max);

    /**
     * Removes an item whose handler succeeded.
     *
     * @param name the lock name
     * @param item the item as {@link #claim} or {@link #failed} returned it
     * @param token the token it was claimed under
     * @return false when it was no longer claimed under that token (a later holder took it over)
     */
    boolean complete(String name, ParkedItem item, long token);

    /**
     * Records one failed attempt durably, leaving the item claimed under {@code token}.
     *
     * @param name the lock name
     * @param item the item as claimed
     * @param token the token it was claimed under
     * @return the item with its attempts raised by one, or null when it was no longer claimed
     *     under that token
     */
    ParkedItem failed(String name, ParkedItem item, long token);

    /**
     * Moves a claimed item to the dead letters with the error that stopped it.
     *
     * @param name the lock name
     * @param item the item as {@link #failed} returned it
     * @param token the token it was claimed under
     * @param error the last failure's text
     * @return false when it was no longer claimed under that token
     */
    boolean deadLetter(String name, ParkedItem item, long token, String error);

    /**
     * Tells whether any item waits, parked or claimed (dead letters do not count). Called after
     * every release, so it should be one cheap look.
     *
     * @param name the lock name
     * @return true when nothing waits
     */
    boolean isEmpty(String name);

    /**
     * Lists the items that wait, parked or claimed, for inspection.
     *
     * @param name the lock name
     * @return the items, sorted by id
     */
    List<ParkedItem> list(String name);

    /**
     * Lists the dead letters, for inspection.
     *
     * @param name the lock name
     * @return the dead letters, sorted by item id
     */
    List<DeadLetter> deadLetters(String name);

    /** Frees the spool's resources; parked items stay where they are. Idempotent. */
    @Override
    void close();
}
