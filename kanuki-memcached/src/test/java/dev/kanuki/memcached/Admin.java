package dev.kanuki.memcached;

import dev.kanuki.testkit.MemcachedServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** Direct commands to a test server, as an operator or another application would send them. */
final class Admin implements AutoCloseable {
    private final MemcachedNode node;
    private long filled;

    Admin(MemcachedServer server) {
        this.node = new MemcachedNode(server.host(), server.port(), Duration.ofSeconds(30));
    }

    MetaReply ask(String line) {
        return node.call(facts -> List.of(MetaRequest.of(line))).get(0);
    }

    void store(String key, String value, long ttlSeconds) {
        node.call(facts -> List.of(MetaRequest.set(key, value.getBytes(StandardCharsets.UTF_8), "T" + ttlSeconds)));
    }

    /** @return true while the lock item of {@code name} exists */
    boolean lockItemExists(String name) {
        return ask("mg " + MemcachedKeys.of(name).lock() + " c").is("HD");
    }

    /** Deletes the fencing counter of {@code name}, as an operator's delete or an eviction would. */
    void deleteCounter(String name) {
        ask("md " + MemcachedKeys.of(name).fence());
    }

    /**
     * Stores {@code count} new items of {@code valueBytes} bytes (keys as long as the lock keys),
     * each read twice so that memcached counts it as active.
     *
     * @return how many stores the server refused (SERVER_ERROR: out of memory under -M)
     */
    int fill(int count, int valueBytes, boolean read) {
        byte[] value = "v".repeat(valueBytes).getBytes(StandardCharsets.US_ASCII);
        List<MetaRequest> requests = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String key = String.format("kanuki.fill.%032x", filled++);
            requests.add(MetaRequest.set(key, value, "T0"));
            if (read) {
                requests.add(MetaRequest.of("mg " + key + " v"));
                requests.add(MetaRequest.of("mg " + key + " v"));
            }
        }
        int refused = 0;
        for (MetaReply r : node.call(facts -> requests).replies()) {
            if (r.is("SERVER_ERROR")) {
                refused++;
            }
        }
        return refused;
    }

    /** @return the keys on the server that start with {@code prefix}, without touching any item */
    List<String> keys(String prefix) {
        return node.keysStartingWith(prefix, System.nanoTime() + Duration.ofSeconds(30).toNanos());
    }

    @Override
    public void close() {
        node.close();
    }
}
