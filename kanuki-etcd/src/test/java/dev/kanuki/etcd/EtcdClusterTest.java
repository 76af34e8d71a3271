package dev.kanuki.etcd;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.EtcdCluster;
import dev.kanuki.testkit.EtcdServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/** A three-member etcd cluster: one member dies while locks are held, then the quorum goes. */
@TestMethodOrder(org.junit.jupiter.api.MethodOrderer.OrderAnnotation.class)
@Tag("servers")
class EtcdClusterTest {
    private static EtcdCluster cluster;

    @BeforeAll
    static void start() {
        cluster = EtcdCluster.start();
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @Test
    @org.junit.jupiter.api.Order(1)
    void aMemberDiesWhileLocksAreHeld() throws Exception {
        try (LockProvider a = LockProvider.open(cluster.kanukiUri() + "?lease=3s");
             LockProvider b = LockProvider.open(cluster.kanukiUri() + "/kanuki?lease=3s&timeout=4s")) {
            LockHandle held = a.lock("member-dies").acquire(Duration.ofSeconds(10));
            EtcdServer victim = cluster.members().get(0);
            victim.kill();
            // Across several leases the holder keeps its lock and nobody else gets it.
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
            while (System.nanoTime() < until) {
                assertTrue(b.lock("member-dies").tryAcquire().isEmpty(), "a second holder while a member was down");
                Thread.sleep(250);
            }
            assertTrue(held.isHeld() || held.lost().isDone(), "held or told");
            if (held.isHeld()) {
                held.verify();
            }
            long token = held.fencingToken();
            held.close();
            try (LockHandle next = b.lock("member-dies").acquire(Duration.ofSeconds(15))) {
                assertTrue(next.fencingToken() > token);
            }
            victim.restart();
        }
    }

    @Test
    @org.junit.jupiter.api.Order(2)
    void withoutAQuorumAcquisitionsKeepTheirDeadlineAndHoldersAreTold() throws Exception {
        // timeout=5s per call: acquire(3s) must still give up near 3 s (the caller's deadline wins)
        try (LockProvider locks = LockProvider.open(cluster.kanukiUri() + "?lease=3s&timeout=5s")) {
            LockHandle held = locks.lock("quorum").acquire(Duration.ofSeconds(10));
            cluster.members().get(1).kill();
            cluster.members().get(2).kill();
            long start = System.nanoTime();
            assertThrows(LockException.class, () -> locks.lock("other").acquire(Duration.ofSeconds(3)));
            long took = (System.nanoTime() - start) / 1_000_000;
            assertTrue(took < 4_900, "acquire(3s) without a quorum took " + took + "ms: longer than its deadline and"
                    + " as long as a whole 5 s call");
            held.lost().get(20, TimeUnit.SECONDS); // renewals fail: the holder cannot be sure any more
            assertFalse(held.isHeld());
            held.close();
        }
    }
}
