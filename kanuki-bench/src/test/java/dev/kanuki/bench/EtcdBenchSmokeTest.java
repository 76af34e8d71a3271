package dev.kanuki.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.testkit.EtcdServer;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link EtcdInterleaved}'s sides each do their work against a real etcd, in a tiny run that
 * measures nothing (skipped when etcd is not installed): a raw transaction that finds its key
 * taken throws.
 */
@Tag("servers")
@Tag("slow")
class EtcdBenchSmokeTest {

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void uncontendedSides() throws Exception {
        try (EtcdServer server = BenchServers.startOrSkip(EtcdServer::start)) {
            InterleavedRounds.Results results = EtcdInterleaved.run(server, 0, 1, 1, 2);
            assertEquals(List.of("kanuki", "kanukiTry", "raw", "same"), results.names());
            for (String side : results.names()) {
                assertTrue(results.median(side) > 0, side);
            }
        }
    }
}
