package dev.kanuki.memcached;

import dev.kanuki.spi.SafeNames;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Consistent hashing: which server a name lives on. Each server takes {@value #POINTS} points on
 * a ring of 64-bit numbers (from the SHA-256 of {@code host:port#i}); a name goes to the first
 * point at or after its own digest. Adding a server to n moves about 1/(n+1) of the names (those
 * whose next point is now one of the new server's), removing one moves only its own names.
 * Every client must write the servers the same way ({@code host:port}, the same host names) to
 * agree on the ring; the order in the URI does not matter.
 *
 * @param <T> what a server is
 */
final class HashRing<T> {
    /** Points per server: enough that shares differ by a few per cent, cheap to build. */
    static final int POINTS = 160;

    private final TreeMap<Long, T> ring = new TreeMap<>();
    /** The server when there is only one: no lookup per call. */
    private final T only;

    /**
     * @param servers each server by its {@code host:port}
     */
    HashRing(Map<String, T> servers) {
        if (servers.isEmpty()) {
            throw new IllegalArgumentException("no servers");
        }
        servers.forEach((name, server) -> {
            for (int i = 0; i < POINTS; i++) {
                ring.putIfAbsent(position(SafeNames.hash(name + "#" + i)), server);
            }
        });
        only = servers.size() == 1 ? servers.values().iterator().next() : null;
    }

    /**
     * @param digest the name's digest as hex ({@link MemcachedKeys#digest()}), at least 16 digits
     * @return the server the name lives on
     */
    T serverFor(String digest) {
        if (only != null) {
            return only;
        }
        Map.Entry<Long, T> e = ring.ceilingEntry(position(digest));
        return e != null ? e.getValue() : ring.firstEntry().getValue();
    }

    /** {@return every server, once each, in ring order of their first point} */
    List<T> servers() {
        return ring.values().stream().distinct().toList();
    }

    private static long position(String hex) {
        return Long.parseUnsignedLong(hex.substring(0, 16), 16);
    }
}
