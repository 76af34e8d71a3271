package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.spi.SafeNames;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.IntSupplier;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The os strategy's table of lock files ({@link LockFileTable}) holds only the names in use or
 * used lately: after many distinct names it is back to the held ones; and forgetting a name while
 * it is being taken again never costs a holder its kernel lock (a second descriptor of the file,
 * once closed, would free it).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class OsManyNamesMemoryTest {
    /**
     * Distinct names taken and given back: before entries were forgotten, each stayed for good
     * (the issue measured 120,000 names; 100,000 are measured by ManyNamesHeap in kanuki-bench).
     */
    static final int NAMES = 4_000;

    @TempDir
    Path tempDir;

    @Test
    void manyDistinctNamesLeaveOnlyTheHeldOnesInTheTable() throws Exception {
        Path dir = Files.createDirectories(tempDir.resolve("locks")).toRealPath();
        try (LockProvider provider = LockProvider.open("file:" + dir + "?strategy=os")) {
            List<LockHandle> held = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                held.add(provider.lock("held-" + i).acquire(Duration.ofSeconds(10)));
            }
            for (int i = 0; i < NAMES; i++) {
                provider.lock("job-" + i).acquire(Duration.ofSeconds(10)).close();
            }
            assertEventually(() -> LockFileTable.sizeOf(dir), 3, "entries left with 3 names held");
            for (LockHandle h : held) {
                assertTrue(h.isHeld(), "a held lock was lost");
                assertEquals(LockStatus.State.HELD, KernelLockTable.stateOf(lockFile(dir, h.name())),
                        "the kernel no longer has the lock of " + h.name());
                h.close();
            }
            assertEventually(() -> LockFileTable.sizeOf(dir), 0, "entries left after every release");
        }
    }

    /**
     * Threads take and give back names of a pool large enough that a name is often idle for the
     * table's second between two uses, so its entry is forgotten now and then just as a thread
     * takes it again. Every holder checks, in the kernel's lock table, that its lock is there.
     */
    @Test
    void forgettingANameWhileItIsTakenNeverFreesAHoldersLock() throws Exception {
        Path dir = Files.createDirectories(tempDir.resolve("race")).toRealPath();
        Assumptions.assumeTrue(KernelLockTable.usableIn(dir), "/proc/locks is not readable here");
        long retiredBefore = LockFileTable.retiredSoFar();
        AtomicReference<String> broken = new AtomicReference<>();
        AtomicLong held = new AtomicLong();
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(8);
        try (LockProvider provider = LockProvider.open("file:" + dir + "?strategy=os")) {
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 3; t++) {
                Thread thread = new Thread(() -> {
                    while (System.nanoTime() < until && broken.get() == null) {
                        String name = "n" + ThreadLocalRandom.current().nextInt(300);
                        Optional<LockHandle> handle = provider.lock(name).tryAcquire();
                        if (handle.isEmpty()) {
                            continue;
                        }
                        try (LockHandle h = handle.get()) {
                            held.incrementAndGet();
                            checkHeld(dir, name, broken);
                            if (ThreadLocalRandom.current().nextInt(50) == 0) {
                                Thread.sleep(1_100); // longer than the table's idle second: holders and others age
                                checkHeld(dir, name, broken);
                            }
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                });
                thread.start();
                threads.add(thread);
            }
            for (Thread t : threads) {
                t.join();
            }
        }
        assertEquals(null, broken.get());
        assertTrue(held.get() > 0);
        assertTrue(LockFileTable.retiredSoFar() > retiredBefore, "no entry was forgotten: the race was not tried");
    }

    private static void checkHeld(Path dir, String name, AtomicReference<String> broken) {
        LockStatus.State state = KernelLockTable.stateOf(lockFile(dir, name));
        if (state != null && state != LockStatus.State.HELD) {
            broken.compareAndSet(null, name + " is " + state + " in the kernel while held");
        }
    }

    private static Path lockFile(Path dir, String name) {
        return dir.resolve(SafeNames.stem(name, "L") + ".lock");
    }

    private static void assertEventually(IntSupplier actual, int expected, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        int seen = actual.getAsInt();
        while (seen != expected && System.nanoTime() < deadline) {
            Thread.sleep(100);
            seen = actual.getAsInt();
        }
        assertEquals(expected, seen, what);
    }
}
