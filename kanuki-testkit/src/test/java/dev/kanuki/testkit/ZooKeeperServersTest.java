package dev.kanuki.testkit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The test ZooKeeper servers start, serve, and an ensemble serves only with a quorum. */
@Tag("servers")
class ZooKeeperServersTest {

    @Test
    void aStandaloneServerServesAndRestartsOnItsPort() {
        try (ZooKeeperServer server = ZooKeeperServer.start()) {
            assertTrue(server.srvr().contains("Mode: standalone"), server.srvr());
            int port = server.port();
            server.kill();
            assertFalse(server.isServing());
            server.restart();
            assertTrue(server.isServing());
            assertTrue(port == server.port());
        }
    }

    @Test
    void anEnsembleServesWithAQuorumOnly() {
        try (ZooKeeperEnsemble ensemble = ZooKeeperEnsemble.start()) {
            long leaders = ensemble.members().stream().filter(m -> m.srvr().contains("Mode: leader")).count();
            assertTrue(leaders == 1, "one leader");
            ensemble.members().get(0).kill();
            ensemble.members().get(1).kill();
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30))
                    .until(() -> !ensemble.members().get(2).isServing());
        }
    }
}
