package dev.kanuki.jdbc;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What one backend has learnt about the names it locks, by record id, to save round trips. All
 * of it is a hint: forgetting (each kind is bounded and cleared when full) costs a round trip,
 * never correctness.
 *
 * <ul>
 *   <li>registered: the name's row exists in the lock-record table.</li>
 *   <li>fenced: the last holder here asked for a fencing token, so the next acquisition issues
 *       it in its own round trip.</li>
 *   <li>contended: the name was found held or waited for less than
 *       {@link #CONTENDED_MEMORY_NANOS} ago, so a wait goes straight to the blocking statement.</li>
 * </ul>
 */
final class NameHistory {
    /** How many names each kind remembers before it starts again. */
    static final int LIMIT = 100_000;
    /** How long a name counts as contended after a try found it held. */
    static final long CONTENDED_MEMORY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final Set<String> registered = ConcurrentHashMap.newKeySet();
    private final Set<String> fenced = ConcurrentHashMap.newKeySet();
    private final Map<String, Long> contendedAt = new ConcurrentHashMap<>();

    boolean isRegistered(String id) {
        return registered.contains(id);
    }

    void registered(String id) {
        add(registered, id);
    }

    boolean isFenced(String id) {
        return fenced.contains(id);
    }

    /** @param asked whether the name's holder asked for its token */
    void fenced(String id, boolean asked) {
        if (asked) {
            add(fenced, id);
        } else {
            fenced.remove(id);
        }
    }

    /** @return whether the name was found held or waited for within the last {@link #CONTENDED_MEMORY_NANOS} */
    boolean isContended(String id, long nowNanos) {
        Long at = contendedAt.get(id);
        return at != null && nowNanos - at <= CONTENDED_MEMORY_NANOS;
    }

    /** Remembers that the name was found held (or had to be waited for) at {@code nowNanos}. */
    void contended(String id, long nowNanos) {
        if (contendedAt.size() >= LIMIT) {
            contendedAt.clear();
        }
        contendedAt.put(id, nowNanos);
    }

    /** Forgets that the name was contended: a try found it free. */
    void free(String id) {
        contendedAt.remove(id);
    }

    private static void add(Set<String> set, String id) {
        if (set.size() >= LIMIT) {
            set.clear();
        }
        set.add(id);
    }
}
