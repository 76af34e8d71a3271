package dev.kanuki;

import java.util.Objects;

/**
 * An item a {@link ParkingLock}'s handler failed on too many times, set aside so that it no
 * longer holds up the spool.
 *
 * @param item the item, with the number of failed attempts
 * @param error what the last failure said (the exception's class and message)
 */
public record DeadLetter(ParkedItem item, String error) {

    /**
     * Checks the fields.
     *
     * @param item the item
     * @param error the last error
     */
    public DeadLetter {
        Objects.requireNonNull(item, "item");
        Objects.requireNonNull(error, "error");
    }
}
