package dev.kanuki;

import dev.kanuki.spi.SafeNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Helpers for using several locks together.
 */
public final class Locks {
    private Locks() {
    }

    /**
     * The canonical order in which {@link #acquireAll} takes locks: by name (UTF-16 order), then
     * by identity for equal names. Any two callers taking the same locks take them in the same
     * order, so they cannot deadlock against each other (as A locking P then Q while B locks Q
     * then P would).
     */
    public static final Comparator<DistributedLock> CANONICAL_ORDER =
            Comparator.comparing(DistributedLock::name).thenComparingInt(System::identityHashCode);

    /**
     * Acquires all the given locks in {@link #CANONICAL_ORDER}, within one overall timeout.
     * When any of them cannot be obtained in time, the ones already taken are released and the
     * exception is thrown.
     *
     * @param timeout the longest wait for all of them together
     * @param locks the locks to take; the same lock twice (equal locks: same store, name and
     *     mode, even from two {@code lock(name)} calls) is not allowed: it would wait for itself
     * @return a set of handles; closing it releases them all, in reverse order
     * @throws LockTimeoutException when not all were obtained in time (its timeout is the one
     *     given here); none is then held
     * @throws IllegalArgumentException when the same lock appears twice
     */
    public static LockSet acquireAll(Duration timeout, DistributedLock... locks) {
        List<DistributedLock> ordered = new ArrayList<>(Arrays.asList(locks));
        Set<DistributedLock> seen = new HashSet<>();
        for (DistributedLock lock : ordered) {
            if (!seen.add(lock)) {
                throw new IllegalArgumentException("lock '" + SafeNames.printable(lock.name())
                        + "' given twice to acquireAll; it would wait for itself");
            }
        }
        ordered.sort(CANONICAL_ORDER);
        long deadline = System.nanoTime() + Math.min(timeout.toNanos(), Long.MAX_VALUE / 4);
        List<LockHandle> held = new ArrayList<>(ordered.size());
        try {
            for (DistributedLock lock : ordered) {
                long remaining = Math.max(0, deadline - System.nanoTime());
                held.add(lock.acquire(Duration.ofNanos(remaining)));
            }
            return new LockSet(held);
        } catch (LockTimeoutException e) {
            releaseAll(held);
            // The caller's timeout, as written, not what was left of it for this lock.
            throw new LockTimeoutException(e.lockName(), timeout, e.holder().orElse(null));
        } catch (RuntimeException | Error e) {
            releaseAll(held);
            throw e;
        }
    }

    private static void releaseAll(List<LockHandle> held) {
        for (int i = held.size() - 1; i >= 0; i--) {
            held.get(i).close();
        }
    }
}
