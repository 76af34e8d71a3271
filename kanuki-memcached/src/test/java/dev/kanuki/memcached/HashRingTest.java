package dev.kanuki.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Consistent hashing: balanced shares, few names moved when a server joins or leaves. */
class HashRingTest {
    private static final int NAMES = 10_000;

    private static HashRing<String> ring(String... servers) {
        Map<String, String> byName = new LinkedHashMap<>();
        for (String s : servers) {
            byName.put(s, s);
        }
        return new HashRing<>(byName);
    }

    private static Map<String, String> placement(HashRing<String> ring) {
        Map<String, String> where = new HashMap<>();
        for (int i = 0; i < NAMES; i++) {
            String name = "order-" + i;
            where.put(name, ring.serverFor(MemcachedKeys.of(name).digest()));
        }
        return where;
    }

    @Test
    void addingAFourthServerMovesAboutAQuarterOfTheNamesAllToIt() {
        Map<String, String> before = placement(ring("10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211"));
        Map<String, String> after = placement(ring("10.0.0.1:11211", "10.0.0.2:11211", "10.0.0.3:11211",
                "10.0.0.4:11211"));
        int moved = 0;
        for (Map.Entry<String, String> e : before.entrySet()) {
            String now = after.get(e.getKey());
            if (!now.equals(e.getValue())) {
                moved++;
                assertEquals("10.0.0.4:11211", now, "a name moved between two old servers: " + e.getKey());
            }
        }
        // a modulo hash would move three quarters; the ideal is a quarter
        assertTrue(moved > NAMES * 0.15 && moved < NAMES * 0.35, moved + " of " + NAMES + " names moved");
    }

    @Test
    void removingAServerMovesOnlyItsNames() {
        Map<String, String> before = placement(ring("a:11211", "b:11211", "c:11211"));
        Map<String, String> after = placement(ring("a:11211", "c:11211"));
        before.forEach((name, server) -> {
            if (!server.equals("b:11211")) {
                assertEquals(server, after.get(name), name);
            }
        });
    }

    @Test
    void sharesAreBalancedAndTheOrderOfServersDoesNotMatter() {
        Map<String, String> one = placement(ring("a:11211", "b:11211", "c:11211"));
        Map<String, String> other = placement(ring("c:11211", "a:11211", "b:11211"));
        assertEquals(one, other, "the URI's order must not change where names live");
        Map<String, Integer> shares = new HashMap<>();
        one.values().forEach(s -> shares.merge(s, 1, Integer::sum));
        for (int share : shares.values()) {
            assertTrue(share > NAMES * 0.2 && share < NAMES * 0.47, "shares " + shares);
        }
        assertEquals(List.of("a:11211", "b:11211", "c:11211"),
                ring("a:11211", "b:11211", "c:11211").servers().stream().sorted().toList());
    }
}
