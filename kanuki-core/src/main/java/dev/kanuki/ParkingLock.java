package dev.kanuki;

import dev.kanuki.park.ParkingLockImpl;
import dev.kanuki.spi.WorkSpool;
import java.util.List;
import java.util.Objects;

/**
 * "Run this update under the lock, or park it for the holder": a lock whose callers never wait
 * and never lose their work. {@link #offer} takes the lock if it is free and applies the item
 * (after everything parked before it); if the lock is busy it parks the item durably in a
 * {@link WorkSpool} and returns, and the holder applies it before it releases. This is flat
 * combining across processes: one holder applies many parked updates per acquisition, and a
 * handler that overrides {@link ParkHandler#applyAll} applies each claimed batch at once and
 * makes it durable once.
 *
 * <p>Guarantees (details and the reasoning in {@code docs/park.md}):
 * <ul>
 *   <li>no parked item waits while nobody holds the lock: a holder drains the spool, releases,
 *       looks once more and takes the lock again if something was parked meanwhile; a caller
 *       that parks tries the lock again after parking. Only a holder that dies leaves items
 *       waiting, until the next offer or {@link #drain()};</li>
 *   <li>at least once, in offer order per producer (a process); a holder killed mid-batch leaves
 *       its claimed items to the next holder;</li>
 *   <li>an item the handler fails {@code maxAttempts} times goes to the dead letters.</li>
 * </ul>
 *
 * <p>Thread-safe; all processes taking part open one for the same lock name with the same
 * handler and a spool on the same store.
 */
public interface ParkingLock {

    /** {@return the lock name} */
    String name();

    /**
     * Applies the item now under the lock if the lock is free, else parks it for the holder.
     * Never waits for the lock. When this call takes the lock it also applies everything parked
     * before (so it may run other processes' items), and it returns only after that.
     *
     * @param item the work, as bytes (copied)
     * @return applied (with the fencing token) or parked (with the item id)
     * @throws LockBackendException when the item could neither be applied nor stored
     */
    Offer offer(byte[] item);

    /**
     * Takes the lock if it is free and applies everything parked; for start-up, a timer, or
     * after a holder crashed (items it had claimed then wait until someone drains).
     *
     * @return the number of items applied (0 when the lock was busy: its holder drains)
     */
    int drain();

    /** {@return the items waiting (parked or claimed), sorted by id} */
    List<ParkedItem> waiting();

    /** {@return the items set aside after too many failures, sorted by id} */
    List<DeadLetter> deadLetters();

    /**
     * Starts building a parking lock.
     *
     * @param lock the lock (from {@link LockProvider#lock})
     * @param spool where busy offers park; on a store every participating process reaches
     * @param handler applies items; every participating process registers the same one
     * @return a builder
     */
    static Builder builder(DistributedLock lock, WorkSpool spool, ParkHandler handler) {
        return new Builder(lock, spool, handler);
    }

    /** Options of a {@link ParkingLock}. */
    final class Builder {
        private final DistributedLock lock;
        private final WorkSpool spool;
        private final ParkHandler handler;
        private int maxAttempts = 5;
        private int batchSize = 100;

        private Builder(DistributedLock lock, WorkSpool spool, ParkHandler handler) {
            this.lock = Objects.requireNonNull(lock, "lock");
            this.spool = Objects.requireNonNull(spool, "spool");
            this.handler = Objects.requireNonNull(handler, "handler");
        }

        /**
         * Sets how many times the handler may fail on an item before it becomes a dead letter
         * (default 5). The attempts follow one another at once, within one drain.
         *
         * @param attempts at least 1
         * @return this builder
         */
        public Builder maxAttempts(int attempts) {
            if (attempts < 1) {
                throw new IllegalArgumentException("maxAttempts must be at least 1: " + attempts);
            }
            this.maxAttempts = attempts;
            return this;
        }

        /**
         * Sets how many items a holder claims from the spool at once (default 100): the most
         * items one {@link ParkHandler#applyAll} call gets.
         *
         * @param size at least 1
         * @return this builder
         */
        public Builder batchSize(int size) {
            if (size < 1) {
                throw new IllegalArgumentException("batchSize must be at least 1: " + size);
            }
            this.batchSize = size;
            return this;
        }

        /** {@return the parking lock} */
        public ParkingLock build() {
            return new ParkingLockImpl(lock, spool, handler, maxAttempts, batchSize);
        }
    }
}
