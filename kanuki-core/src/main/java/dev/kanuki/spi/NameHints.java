package dev.kanuki.spi;

import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * What a backend has learnt about the names it locks, to save round trips. Hints only: each
 * kind is bounded and forgotten all at once when full, and forgetting costs a round trip, never
 * correctness.
 *
 * <ul>
 *   <li>fenced: the last holder of the name here asked for its fencing token, so the next
 *       acquisition issues the token with the lock (a backend whose tokens are issued on demand,
 *       see {@link TokenOnDemandGrant});</li>
 *   <li>contended: the name was found held less than {@link #CONTENDED_MEMORY_NANOS} ago, so the
 *       next attempt takes the path for a held lock at once.</li>
 * </ul>
 *
 * <p>Thread-safe.
 */
public final class NameHints {
    /** How long a name counts as contended after an attempt found it held. */
    public static final long CONTENDED_MEMORY_NANOS = TimeUnit.SECONDS.toNanos(1);

    private final int limit;
    private final Set<String> fenced = ConcurrentHashMap.newKeySet();
    private final Map<String, Long> contendedAt = new ConcurrentHashMap<>();

    /**
     * Makes empty hints.
     *
     * @param limit how many names each kind remembers before it forgets them all
     */
    public NameHints(int limit) {
        this.limit = limit;
    }

    /**
     * Tells whether the last holder of a name in this process asked for its fencing token.
     *
     * @param name a lock name (or a backend's key for it)
     * @return whether the name's last holder here asked for its fencing token
     */
    public boolean isFenced(String name) {
        return fenced.contains(name);
    }

    /**
     * Remembers whether the name's holder asked for its fencing token: from then on the name's
     * acquisitions issue it at once ({@code true}), or on demand again ({@code false}).
     *
     * @param name a lock name (or a backend's key for it)
     * @param asked whether the holder asked
     */
    public void fenced(String name, boolean asked) {
        if (!asked) {
            fenced.remove(name);
            return;
        }
        if (fenced.size() >= limit) {
            fenced.clear();
        }
        fenced.add(name);
    }

    /**
     * Tells whether a name was found held recently, in this process.
     *
     * @param name a lock name (or a backend's key for it)
     * @param nowNanos now, on the {@link System#nanoTime()} clock
     * @return whether the name was found held within the last {@link #CONTENDED_MEMORY_NANOS}
     */
    public boolean isContended(String name, long nowNanos) {
        Long at = contendedAt.get(name);
        return at != null && nowNanos - at <= CONTENDED_MEMORY_NANOS;
    }

    /**
     * Remembers that the name was found held (or had to be waited for).
     *
     * @param name a lock name (or a backend's key for it)
     * @param nowNanos now, on the {@link System#nanoTime()} clock
     */
    public void contended(String name, long nowNanos) {
        if (contendedAt.size() >= limit) {
            contendedAt.clear();
        }
        contendedAt.put(name, nowNanos);
    }

    /**
     * Forgets that the name was contended: an attempt found it free.
     *
     * @param name a lock name (or a backend's key for it)
     */
    public void free(String name) {
        contendedAt.remove(name);
    }
}
