package dev.kanuki.jdbc;

import dev.kanuki.spi.NameHints;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What one backend has learnt about the names it locks, by record id, to save round trips. All
 * of it is a hint: forgetting (each kind is bounded and cleared when full) costs a round trip,
 * never correctness.
 *
 * <ul>
 *   <li>registered: the name's row existed in the lock-record table less than
 *       {@link #REGISTRATION_MEMORY_NANOS} ago. Kept only that long because {@code prune} in another
 *       process may delete the row of a free lock: a name taken again re-registers within a minute,
 *       so {@code list} finds it.</li>
 *   <li>fenced and contended ({@link NameHints}): the last holder here asked for a fencing token,
 *       so the next acquisition issues it in its own round trip; the name was found held or
 *       waited for less than {@link NameHints#CONTENDED_MEMORY_NANOS} ago, so a wait goes
 *       straight to the blocking statement.</li>
 * </ul>
 */
final class NameHistory {
    /** How many names each kind remembers before it starts again: bounds this table at about 2 MB. */
    static final int LIMIT = 10_000;

    /** How long a registration is trusted: a row may be pruned behind this process. */
    static final long REGISTRATION_MEMORY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final Map<String, Long> registeredAt = new ConcurrentHashMap<>();
    private final NameHints hints = new NameHints(LIMIT);

    boolean isRegistered(String id, long nowNanos) {
        Long at = registeredAt.get(id);
        return at != null && nowNanos - at < REGISTRATION_MEMORY_NANOS;
    }

    void registered(String id, long nowNanos) {
        if (registeredAt.size() >= LIMIT) {
            registeredAt.clear();
        }
        registeredAt.put(id, nowNanos);
    }

    /** Forgets every registration: this process pruned rows. */
    void forgetRegistrations() {
        registeredAt.clear();
    }

    boolean isFenced(String id) {
        return hints.isFenced(id);
    }

    /** @param asked whether the name's holder asked for its token */
    void fenced(String id, boolean asked) {
        hints.fenced(id, asked);
    }

    /** {@return whether the name was found held or waited for within the last {@link NameHints#CONTENDED_MEMORY_NANOS}} */
    boolean isContended(String id, long nowNanos) {
        return hints.isContended(id, nowNanos);
    }

    /** Remembers that the name was found held (or had to be waited for) at {@code nowNanos}. */
    void contended(String id, long nowNanos) {
        hints.contended(id, nowNanos);
    }

    /** Forgets that the name was contended: a try found it free. */
    void free(String id) {
        hints.free(id);
    }
}
