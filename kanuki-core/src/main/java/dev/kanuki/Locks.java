package dev.kanuki;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Helpers for using several locks together.
 */
public final class Locks {
    private Locks() {
    }

    /**
     * The canonical order in which {@link #acquireAll} takes locks: by name (UTF-16 order), then
     * by identity for equal names. Any two callers taking the same locks take them in the same
     * order, so they cannot deadlock against each other (the seeds' "A locks P then Q, B locks Q
     * then P").
     */
    public static final Comparator<DistributedLock> CANONICAL_ORDER =
            Comparator.comparing(DistributedLock::name).thenComparingInt(System::identityHashCode);

    /**
     * Acquires all the given locks in {@link #CANONICAL_ORDER}, within one overall timeout.
     * When any of them cannot be obtained in time, the ones already taken are released and the
     * exception is thrown.
     *
     * @param timeout the longest wait for all of them together
     * @param locks the locks to take; duplicates are not allowed (they would wait for themselves)
     * @return a set of handles; closing it releases them all, in reverse order
     * @throws LockTimeoutException when not all were obtained in time; none is then held
     * @throws IllegalArgumentException when the same lock appears twice
     */
    public static LockSet acquireAll(Duration timeout, DistributedLock... locks) {
        List<DistributedLock> ordered = new ArrayList<>(Arrays.asList(locks));
        ordered.sort(CANONICAL_ORDER);
        for (int i = 1; i < ordered.size(); i++) {
            if (ordered.get(i) == ordered.get(i - 1)) {
                throw new IllegalArgumentException("lock '" + LockNames.printable(ordered.get(i).name())
                        + "' given twice to acquireAll; it would wait for itself");
            }
        }
        long deadline = System.nanoTime() + Math.min(timeout.toNanos(), Long.MAX_VALUE / 4);
        List<LockHandle> held = new ArrayList<>(ordered.size());
        try {
            for (DistributedLock lock : ordered) {
                long remaining = Math.max(0, deadline - System.nanoTime());
                held.add(lock.acquire(Duration.ofNanos(remaining)));
            }
            return new LockSet(held);
        } catch (RuntimeException | Error e) {
            for (int i = held.size() - 1; i >= 0; i--) {
                held.get(i).close();
            }
            throw e;
        }
    }
}
