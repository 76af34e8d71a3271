package dev.kanuki.zookeeper;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.ZooKeeperEnsemble;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Without a quorum (two of three members killed), every call keeps its deadline: opening a
 * provider (bounded by its {@code timeout}), an acquisition and a try on a provider opened
 * before, and closing a held handle and its provider. Bounds are the deadline plus a generous
 * slack for a loaded machine, never tight.
 */
@Tag("servers")
class ZooKeeperQuorumDeadlineTest {
    /** What a loaded machine may add to a deadline. */
    private static final long SLACK_MILLIS = 2_000;
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
    void withoutAQuorumEveryCallKeepsItsDeadline() throws Exception {
        LockProvider holder = LockProvider.open(ensemble.kanukiUri() + "?timeout=5s");
        LockHandle held = holder.lock("held").acquire(Duration.ofSeconds(20));
        ensemble.members().get(1).kill();
        ensemble.members().get(2).kill();

        long start = System.nanoTime();
        LockBackendException e = assertThrows(LockBackendException.class,
                () -> LockProvider.open(ensemble.kanukiUri() + "?timeout=3s"));
        assertWithin(3_000, start, "opening a provider with timeout=3s");
        assertTrue(e.getMessage().contains("within 3000ms"), e.getMessage());

        start = System.nanoTime();
        assertThrows(LockException.class, () -> holder.lock("other").acquire(Duration.ofSeconds(3)));
        assertWithin(3_000, start, "acquire(3s) without a quorum");
        start = System.nanoTime();
        try {
            assertTrue(holder.lock("try").tryAcquire().isEmpty(), "granted without a quorum");
        } catch (LockException expected) {
            // as good as empty: the ensemble cannot answer
        }
        assertWithin(1_000, start, "tryAcquire() without a quorum");

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
