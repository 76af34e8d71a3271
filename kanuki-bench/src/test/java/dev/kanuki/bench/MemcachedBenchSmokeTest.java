package dev.kanuki.bench;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kanuki.testkit.MemcachedServer;
import dev.kanuki.testkit.MissingServerException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link MemcachedInterleaved}'s sides work against a real memcached (skipped when it is not installed). */
@Tag("servers")
@Tag("slow")
class MemcachedBenchSmokeTest {

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void byHandSidesAndOneInterleavedRound() throws Exception {
        MemcachedServer server;
        try {
            server = MemcachedServer.start();
        } catch (MissingServerException e) {
            assumeTrue(false, e.getMessage());
            return;
        }
        try (server; MemcachedByHand raw = new MemcachedByHand(server.host(), server.port());
             MemcachedByHand other = new MemcachedByHand(server.host(), server.port())) {
            byte[] record = "record".getBytes(StandardCharsets.US_ASCII);
            for (int i = 0; i < 3; i++) {
                raw.addAndDelete("smoke.raw", record); // fails unless each add finds the key free again
                raw.sameCommands("smoke.same", record);
            }
            other.sameCommands("smoke.same", record); // the first connection released it
            MemcachedInterleaved.run(server, 0, 1);
        }
    }
}
