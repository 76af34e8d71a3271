package dev.kanuki.torture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The torture harness itself: it must catch a missing lock, and pass a working one. */
@Tag("slow")
class TortureHarnessTest {

    @Test
    @Timeout(60)
    void withoutALockUpdatesAreLost(@TempDir Path dir) throws Exception {
        AtomicLong lastProgress = new AtomicLong();
        TortureResult result = Torture.run(new TortureOptions(null, "torture", 4, 300, dir,
                Duration.ofMillis(1), Duration.ofSeconds(30)), lastProgress::set);

        assertTrue(result.workerErrors().isEmpty(), () -> "worker errors: " + result.workerErrors());
        assertEquals(1200, result.expected());
        assertTrue(result.lostUpdates() > 0, () -> "no update lost without a lock: " + result);
        assertTrue(result.overlaps() > 0, () -> "no overlap seen without a lock: " + result);
        assertEquals(0, result.fencingViolations(), "fencing is not checked without a lock");
        assertTrue(!result.passed());
        assertEquals(1200, lastProgress.get(), "the last progress report counts every increment");
    }

    @Test
    @Timeout(60)
    void withALockNoUpdateIsLost(@TempDir Path dir) throws Exception {
        TortureResult result = Torture.run(new TortureOptions("mem:", "torture", 1, 200, dir,
                Duration.ZERO, Duration.ofSeconds(30)), null);

        assertTrue(result.passed(), () -> "torture failed on mem: " + result);
        assertEquals(200, result.actual());
        assertTrue(result.acquisitionsPerSecond() > 0);
        assertTrue(result.p50Nanos() <= result.p99Nanos() && result.p99Nanos() <= result.maxNanos());
    }

    @Test
    void anUnknownBackendFailsBeforeAnyWorkerStarts(@TempDir Path dir) {
        assertThrows(IllegalArgumentException.class, () -> Torture.run(new TortureOptions("nosuch:", "torture",
                2, 10, dir, Duration.ZERO, Duration.ofSeconds(1)), null));
    }

    @Test
    void optionsRejectNonsense(@TempDir Path dir) {
        assertThrows(IllegalArgumentException.class,
                () -> new TortureOptions(null, "t", 0, 1, dir, Duration.ZERO, Duration.ZERO));
        assertThrows(IllegalArgumentException.class,
                () -> new TortureOptions(null, "t", 1, 0, dir, Duration.ZERO, Duration.ZERO));
        assertThrows(IllegalArgumentException.class,
                () -> new TortureOptions(null, "", 1, 1, dir, Duration.ZERO, Duration.ZERO));
    }

    @Test
    void percentilesUseTheNearestRank() {
        long[] sorted = new long[100];
        for (int i = 0; i < 100; i++) {
            sorted[i] = i + 1;
        }
        assertEquals(50, Torture.percentile(sorted, 0.5));
        assertEquals(99, Torture.percentile(sorted, 0.99));
        assertEquals(0, Torture.percentile(new long[0], 0.5));
    }
}
