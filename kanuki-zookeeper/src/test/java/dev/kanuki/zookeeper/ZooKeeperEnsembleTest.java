package dev.kanuki.zookeeper;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.ZooKeeperEnsemble;
import dev.kanuki.testkit.ZooKeeperServer;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/** A three-server ZooKeeper ensemble: one member dies while a lock is held, then the quorum goes. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Tag("servers")
class ZooKeeperEnsembleTest {
    private static ZooKeeperEnsemble ensemble;

    @BeforeAll
    static void start() {
        ensemble = ZooKeeperEnsemble.start();
    }

    @AfterAll
    static void stop() {
        ensemble.close();
    }

    @Test
    @Order(1)
    void aMemberDiesWhileALockIsHeld() throws Exception {
        try (LockProvider a = LockProvider.open(ensemble.kanukiUri() + "?session=6s");
             LockProvider b = LockProvider.open(ensemble.kanukiUri() + "/kanuki?session=6s&timeout=2s")) {
            LockHandle held = a.lock("member-dies").acquire(Duration.ofSeconds(10));
            ZooKeeperServer victim = ensemble.members().get(0);
            victim.kill();
            // Past the session timeout: the holder keeps its lock or is told, and nobody else gets it
            // (a holder told of a suspension still owns its node until it closes the handle).
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
            while (System.nanoTime() < until) {
                Optional<LockHandle> second;
                try {
                    second = b.lock("member-dies").tryAcquire();
                } catch (LockException e) {
                    second = Optional.empty(); // b was connected to the dead member: it reconnects elsewhere
                }
                assertTrue(second.isEmpty(), "a second holder while a member was down");
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
    @Order(2)
    void withoutAQuorumAcquisitionsKeepTheirDeadlineAndHoldersAreTold() throws Exception {
        // timeout=5s per call: acquire(3s) must still give up near 3 s (the caller's deadline wins)
        try (LockProvider locks = LockProvider.open(ensemble.kanukiUri() + "?timeout=5s")) {
            LockHandle held = locks.lock("quorum").acquire(Duration.ofSeconds(10));
            ensemble.members().get(1).kill();
            ensemble.members().get(2).kill();
            long start = System.nanoTime();
            assertThrows(LockException.class, () -> locks.lock("other").acquire(Duration.ofSeconds(3)));
            long took = (System.nanoTime() - start) / 1_000_000;
            assertTrue(took < 4_900, "acquire(3s) without a quorum took " + took + "ms: longer than its deadline and"
                    + " as long as a whole 5 s call");
            // the connection is suspended: the holder cannot be sure any more
            held.lost().get(20, TimeUnit.SECONDS);
            assertFalse(held.isHeld());
            held.close();
        }
    }
}
