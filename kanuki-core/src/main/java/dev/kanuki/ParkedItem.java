package dev.kanuki;

import java.util.Arrays;
import java.util.Objects;

/**
 * One unit of work offered to a {@link ParkingLock}: data, never a closure, so that any process
 * that registered a handler for the lock name can run it.
 *
 * @param id unique across processes; ids of one producer sort (as strings) in the order its
 *     offers were made, so a spool hands them out in that order
 * @param producer the offering process's id (also contained in {@code id})
 * @param bytes the work itself, as the application serialised it
 * @param attempts how many times a handler has already failed on this item (0 on its first run)
 */
public record ParkedItem(String id, String producer, byte[] bytes, int attempts) {

    /**
     * Checks the fields.
     *
     * @param id unique id
     * @param producer producer id
     * @param bytes the work
     * @param attempts failures so far, at least 0
     */
    public ParkedItem {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(producer, "producer");
        Objects.requireNonNull(bytes, "bytes");
        if (attempts < 0) {
            throw new IllegalArgumentException("attempts < 0: " + attempts);
        }
    }

    /**
     * {@return this item with its failure count set}
     *
     * @param count the new count
     */
    public ParkedItem withAttempts(int count) {
        return new ParkedItem(id, producer, bytes, count);
    }

    /** {@return true for an item with the same id, producer, attempts and content} */
    @Override
    public boolean equals(Object other) {
        return other instanceof ParkedItem o && id.equals(o.id) && producer.equals(o.producer)
                && attempts == o.attempts && Arrays.equals(bytes, o.bytes);
    }

    /** {@return a hash of the id, the producer, the attempts and the content} */
    @Override
    public int hashCode() {
        return Objects.hash(id, producer, attempts) * 31 + Arrays.hashCode(bytes);
    }

    /** {@return the id, the producer, the attempts and the size (not the content)} */
    @Override
    public String toString() {
        return "ParkedItem[id=" + id + ", producer=" + producer + ", bytes=" + bytes.length
                + ", attempts=" + attempts + "]";
    }
}
