package dev.kanuki.park;

import dev.kanuki.DeadLetter;
import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.Offer;
import dev.kanuki.ParkHandler;
import dev.kanuki.ParkedItem;
import dev.kanuki.ParkingLock;
import dev.kanuki.spi.SafeNames;
import dev.kanuki.spi.WorkSpool;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The drain algorithm of {@link ParkingLock}.
 *
 * <p>Why no parked item waits while nobody holds the lock: a caller that finds the lock busy
 * parks first and tries the lock again after; a holder releases and then looks at the spool.
 * Take an item P parked while holder H held the lock. Either the parker's second try finds the
 * lock free and drains P itself, or some holder H' held the lock after P became visible; H'
 * looks at the spool after its release, so it sees P (unless a later holder drained it already)
 * and takes the lock to drain it, or finds the lock held by yet another holder that will look
 * after its own release. Only a holder that dies breaks the chain; its items wait for the next
 * offer or {@link #drain()}.
 */
public final class ParkingLockImpl implements ParkingLock {
    private static final Logger log = LoggerFactory.getLogger(ParkingLockImpl.class);

    private final DistributedLock lock;
    private final WorkSpool spool;
    private final ParkHandler handler;
    private final int maxAttempts;
    private final int batchSize;
    /** Whether the handler overrides {@link ParkHandler#applyAll}: a claimed batch then goes to it whole. */
    private final boolean batchHandler;
    /** Errors of offered items that failed in the offering call, for a dead letter without a retry. */
    private final java.util.Map<String, String> lastErrors = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Creates the lock; use {@link ParkingLock#builder}.
     *
     * @param lock the lock
     * @param spool the spool
     * @param handler the handler
     * @param maxAttempts failures before an item is a dead letter
     * @param batchSize items per claim
     */
    public ParkingLockImpl(DistributedLock lock, WorkSpool spool, ParkHandler handler, int maxAttempts, int batchSize) {
        this.lock = lock;
        this.spool = spool;
        this.handler = handler;
        this.maxAttempts = maxAttempts;
        this.batchSize = batchSize;
        this.batchHandler = overridesApplyAll(handler);
    }

    /**
     * Whether the handler's class overrides {@link ParkHandler#applyAll}. The inherited default
     * applies item by item, and a failure there would make the fallback apply the items before
     * the failing one a second time: a handler without its own {@code applyAll} keeps the
     * item-by-item drain, as before batches existed.
     */
    private static boolean overridesApplyAll(ParkHandler handler) {
        try {
            return handler.getClass().getMethod("applyAll", List.class, long.class).getDeclaringClass()
                    != ParkHandler.class;
        } catch (NoSuchMethodException | SecurityException e) {
            return false;
        }
    }

    @Override
    public String name() {
        return lock.name();
    }

    @Override
    public Offer offer(byte[] bytes) {
        ParkedItem item = new ParkedItem(ItemIds.next(), ItemIds.PRODUCER, bytes.clone(), 0);
        Optional<LockHandle> taken;
        try {
            taken = lock.tryAcquire();
        } catch (dev.kanuki.LockBackendException e) {
            // The lock's store did not answer: the item is not lost for that, it is parked (the
            // spool may well answer; if not, park throws and the offer fails as a whole).
            log.debug("lock {}: the attempt to take it failed; parking item {}", SafeNames.printable(lock.name()),
                    item.id(), e);
            taken = Optional.empty();
        }
        if (taken.isEmpty()) {
            spool.park(lock.name(), item);
            // The holder may have made its last look at the spool just before this item became
            // visible, and released since: then nobody would come for it. Try once more.
            drainAfter();
            return new Offer(Offer.Outcome.PARKED, item.id(), 0);
        }
        Offer result;
        try (LockHandle handle = taken.get()) {
            long token = handle.fencingToken();
            try {
                // Items parked before this one first: one producer's items run in offer order.
                drainHeld(handle, token);
            } catch (RuntimeException e) {
                // The spool or a handler's bookkeeping failed under the lock: the offered item
                // is parked rather than refused (if parking fails too, the offer fails).
                spool.park(lock.name(), item);
                log.warn("lock {}: draining {} failed; item {} parked for the next holder: {}",
                        SafeNames.printable(lock.name()), spool.describe(), item.id(),
                        SafeNames.printable(String.valueOf(e)));
                return new Offer(Offer.Outcome.PARKED, item.id(), 0);
            }
            result = applyOwn(handle, token, item);
        }
        drainAfter();
        return result;
    }

    /**
     * The look after a release, once the offered item is applied or parked: a failure here must
     * not make the caller believe its item was refused (a retry would offer it twice). The items
     * stay in the spool for the next holder.
     */
    private void drainAfter() {
        try {
            drainWhileWaiting();
        } catch (RuntimeException e) {
            log.warn("lock {}: draining {} after a release failed; the items wait for the next offer or drain(): {}",
                    SafeNames.printable(lock.name()), spool.describe(), SafeNames.printable(String.valueOf(e)));
        }
    }

    private Offer applyOwn(LockHandle handle, long token, ParkedItem item) {
        if (!handle.isHeld()) {
            spool.park(lock.name(), item);
            return new Offer(Offer.Outcome.PARKED, item.id(), 0);
        }
        try {
            handler.apply(item, token);
            return new Offer(Offer.Outcome.APPLIED, item.id(), token);
        } catch (Exception e) {
            // Not lost and not thrown at the caller: it becomes a parked item with one failed
            // attempt, retried (and dead-lettered if need be) like any other.
            log.debug("handler failed on offered item {} of lock {}; parking it for retries", item.id(),
                    SafeNames.printable(lock.name()), e);
            lastErrors.put(item.id(), describe(e));
            spool.park(lock.name(), item.withAttempts(1));
            try {
                drainHeld(handle, token);
            } catch (RuntimeException failed) {
                log.warn("lock {}: draining {} failed; the items wait for the next holder: {}",
                        SafeNames.printable(lock.name()), spool.describe(), SafeNames.printable(String.valueOf(failed)));
            }
            return new Offer(Offer.Outcome.PARKED, item.id(), 0);
        }
    }

    @Override
    public int drain() {
        int applied = 0;
        Optional<LockHandle> taken = lock.tryAcquire();
        if (taken.isEmpty()) {
            return 0;
        }
        try (LockHandle handle = taken.get()) {
            applied += drainHeld(handle, handle.fencingToken());
        }
        return applied + drainWhileWaiting();
    }

    /** After a release: while something waits and the lock is free, take it and drain. */
    private int drainWhileWaiting() {
        int applied = 0;
        while (!spool.isEmpty(lock.name())) {
            Optional<LockHandle> taken = lock.tryAcquire();
            if (taken.isEmpty()) {
                return applied; // its holder looks at the spool after its own release
            }
            Tally tally = new Tally();
            long token;
            try (LockHandle handle = taken.get()) {
                token = handle.fencingToken();
                drainHeld(handle, token, tally);
            }
            applied += tally.applied;
            if (tally.claimed == 0) {
                // Items wait but none could be claimed: they are claimed under a newer token than
                // this holder's. Taking the lock again would find the same; leave them.
                log.warn("lock {}: items wait in {} claimed under a fencing token above {}, this holder's;"
                        + " left for their holder (did this backend's tokens go back?)",
                        SafeNames.printable(lock.name()), spool.describe(), token);
                return applied;
            }
        }
        return applied;
    }

    /** What one drain did. */
    private static final class Tally {
        int claimed;
        int applied;
    }

    private int drainHeld(LockHandle handle, long token) {
        Tally tally = new Tally();
        drainHeld(handle, token, tally);
        return tally.applied;
    }

    /** Runs every waiting item while the handle is held. */
    private void drainHeld(LockHandle handle, long token, Tally tally) {
        while (handle.isHeld()) {
            List<ParkedItem> batch = spool.claim(lock.name(), token, batchSize);
            if (batch.isEmpty()) {
                return;
            }
            tally.claimed += batch.size();
            if (batchHandler) {
                if (!runBatch(handle, token, batch, tally)) {
                    return; // the claimed rest goes to the next holder
                }
                continue;
            }
            for (ParkedItem item : batch) {
                if (!handle.isHeld()) {
                    return; // the claimed rest goes to the next holder
                }
                if (run(handle, token, item)) {
                    tally.applied++;
                }
            }
        }
    }

    /**
     * Runs one claimed batch through {@link ParkHandler#applyAll}; when that throws, runs its
     * items one by one through {@link #run}, so that a failing item is counted and dead-lettered
     * alone and the others are applied. The items leave the spool only after {@code applyAll}
     * returned: until then a holder's death leaves them claimed for the next holder.
     *
     * @return false when the lock was lost (the rest stays claimed for the next holder)
     */
    private boolean runBatch(LockHandle handle, long token, List<ParkedItem> batch, Tally tally) {
        List<ParkedItem> fresh = new ArrayList<>(batch.size());
        for (ParkedItem item : batch) {
            if (item.attempts() >= maxAttempts) {
                run(handle, token, item); // attempts used up before it was claimed: dead-lettered, not applied
            } else {
                fresh.add(item);
            }
        }
        if (fresh.isEmpty()) {
            return true;
        }
        if (!handle.isHeld()) {
            return false;
        }
        try {
            handler.applyAll(List.copyOf(fresh), token);
        } catch (Exception e) {
            // None of the batch is known to be applied. The batch's failure is not counted against
            // any item: the single runs count each item's own failures.
            log.debug("lock {}: a batch of {} items failed; running them one by one", SafeNames.printable(lock.name()),
                    fresh.size(), e);
            for (ParkedItem item : fresh) {
                if (!handle.isHeld()) {
                    return false;
                }
                if (run(handle, token, item)) {
                    tally.applied++;
                }
            }
            return true;
        }
        for (ParkedItem item : fresh) {
            lastErrors.remove(item.id());
            spool.complete(lock.name(), item, token);
            tally.applied++;
        }
        return true;
    }

    /** {@return true when the handler applied the item} Tries it until it succeeds or is dead. */
    private boolean run(LockHandle handle, long token, ParkedItem claimed) {
        ParkedItem item = claimed;
        while (item.attempts() < maxAttempts) {
            try {
                handler.apply(item, token);
            } catch (Exception e) {
                lastErrors.remove(item.id());
                ParkedItem counted = spool.failed(lock.name(), item, token);
                if (counted == null) {
                    return false; // taken over by a later holder: ours was lost
                }
                if (counted.attempts() >= maxAttempts) {
                    log.warn("lock {}: item {} failed {} times; moved to the dead letters of {}: {}",
                            SafeNames.printable(lock.name()), item.id(), counted.attempts(), spool.describe(),
                            SafeNames.printable(describe(e)));
                    spool.deadLetter(lock.name(), counted, token, describe(e));
                    return false;
                }
                log.debug("lock {}: item {} failed (attempt {}), retrying", SafeNames.printable(lock.name()),
                        item.id(), counted.attempts(), e);
                item = counted;
                if (!handle.isHeld()) {
                    return false;
                }
                continue;
            }
            lastErrors.remove(item.id());
            spool.complete(lock.name(), item, token);
            return true;
        }
        // Claimed with its attempts already used up: an offered item that failed in its own call
        // with maxAttempts 1, or a holder that died between counting and moving.
        String error = lastErrors.remove(item.id());
        spool.deadLetter(lock.name(), item, token,
                error != null ? error : "failed " + item.attempts() + " times (the last error was not recorded)");
        return false;
    }

    private static String describe(Exception e) {
        return e.getMessage() == null ? e.getClass().getName() : e.getClass().getName() + ": " + e.getMessage();
    }

    @Override
    public List<ParkedItem> waiting() {
        return spool.list(lock.name());
    }

    @Override
    public List<DeadLetter> deadLetters() {
        return spool.deadLetters(lock.name());
    }

    @Override
    public String toString() {
        return "ParkingLock[" + SafeNames.printable(lock.name()) + " over " + spool.describe() + "]";
    }
}
