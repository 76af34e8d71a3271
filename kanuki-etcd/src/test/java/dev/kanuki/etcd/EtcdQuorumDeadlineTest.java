package dev.kanuki.etcd;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.EtcdCluster;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Without a quorum (two of three members killed), every call keeps its deadline: an
 * acquisition on a provider opened after the quorum went, a try without waiting, and closing a
 * held handle and its provider. Bounds are the deadline plus a generous slack for a loaded
 * machine, never tight.
 */
@Tag("servers")
class EtcdQuorumDeadlineTest {
    /** What a loaded machine may add to a deadline; the bugs this guards took 5–15 s more. */
    private static final long SLACK_MILLIS = 2_000;
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
    void withoutAQuorumEveryCallKeepsItsDeadline() throws Exception {
        LockProvider holder = LockProvider.open(cluster.kanukiUri() + "?lease=10s");
        LockHandle held = holder.lock("held").acquire(Duration.ofSeconds(20));
        cluster.members().get(1).kill();
        cluster.members().get(2).kill();

        long start = System.nanoTime();
        // a member still answers what it serves alone: opening works, the writes cannot commit
        try (LockProvider fresh = LockProvider.open(cluster.kanukiUri())) {
            assertWithin(1_000, start, "opening a provider");
            start = System.nanoTime();
            LockBackendException e = assertThrows(LockBackendException.class,
                    () -> fresh.lock("fresh").acquire(Duration.ofSeconds(3)));
            assertWithin(3_000, start, "acquire(3s) on a provider opened without a quorum");
            assertTrue(e.getMessage().contains("did not answer within"), e.getMessage());
            start = System.nanoTime();
            assertThrows(LockBackendException.class, () -> fresh.lock("try").tryAcquire());
            assertWithin(1_000, start, "tryAcquire() without a quorum");
            start = System.nanoTime();
        }
        assertWithin(1_000, start, "closing a provider that holds nothing");

        start = System.nanoTime();
        held.close();
        assertWithin(1_000, start, "closing a held handle without a quorum");
        assertFalse(held.isHeld());
        start = System.nanoTime();
        holder.close();
        assertWithin(1_000, start, "closing the provider without a quorum");
    }

    private static void assertWithin(long deadlineMillis, long startNanos, String what) {
        long took = (System.nanoTime() - startNanos) / 1_000_000;
        assertTrue(took < deadlineMillis + SLACK_MILLIS, what + " took " + took + "ms; its bound is " + deadlineMillis
                + "ms");
    }
}
