package dev.kanuki.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.testkit.ZooKeeperServer;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The ZooKeeper benchmarks' sides each do their work against a real server, in tiny runs that
 * measure nothing (skipped when ZooKeeper is not installed). A side that fails throws: a raw
 * create that finds its node, a mutex that is not free, a partner that dies.
 */
@Tag("servers")
@Tag("slow")
class ZooKeeperBenchSmokeTest {
    private static ZooKeeperServer server;

    @BeforeAll
    static void start() {
        server = BenchServers.startOrSkip(ZooKeeperServer::start);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void uncontendedSides() throws Exception {
        try (ZooKeeperByHand raw = new ZooKeeperByHand(server.connectString())) {
            String path = "/kanuki-bench-smoke/node";
            raw.parentOf(path);
            assertTrue(raw.tryCreate(path));
            assertTrue(!raw.tryCreate(path), "a second create must find the node");
            raw.delete(path);
        }
        InterleavedRounds.Results results = ZooKeeperInterleaved.run(server, 0, 1, 1, 2);
        assertEquals(List.of("kanuki", "kanukiTry", "raw", "curatorOps", "curator"), results.names());
        assertEquals(1, results.rounds().size());
        for (String side : results.names()) {
            assertTrue(results.median(side) > 0, side);
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void handoffBetweenJvms() throws Exception {
        Map<String, List<double[]>> samples = ZooKeeperHandoff.run(server, 1, 2, 2);
        assertEquals(List.of("kanuki", "curator", "raw"), List.copyOf(samples.keySet()));
        samples.forEach((side, rounds) -> assertEquals(4, rounds.get(0).length, side));
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void contendedInTwoJvms() throws Exception {
        Map<String, List<double[]>> results = ZooKeeperContended.run(server, 1, 500);
        for (String side : List.of("kanuki", "curator")) {
            double[] round = results.get(side).get(0);
            assertTrue(round[2] + round[3] > 0, side + " acquired"); // also checked by run
        }
    }
}
