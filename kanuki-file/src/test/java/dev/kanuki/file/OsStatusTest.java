package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code status} on the os strategy reads the kernel's lock table: it never makes a try-lock fail. */
@Timeout(60)
class OsStatusTest {
    @TempDir
    Path dir;

    @Test
    void statusNeverMakesAConcurrentTryFail() throws Exception {
        assumeTrue(KernelLockTable.usableIn(dir), "/proc/locks cannot be read or matched here");
        try (LockProvider provider = LockProvider.open("file:" + dir + "?strategy=os")) {
            DistributedLock lock = provider.lock("cron-job");
            lock.tryAcquire().orElseThrow().close(); // the lock file exists
            AtomicBoolean done = new AtomicBoolean();
            AtomicInteger peeks = new AtomicInteger();
            CompletableFuture<Void> peeking = CompletableFuture.runAsync(() -> {
                while (!done.get()) {
                    LockStatus.State state = provider.status("cron-job").state();
                    assertTrue(state == LockStatus.State.FREE || state == LockStatus.State.HELD, state.toString());
                    peeks.incrementAndGet();
                }
            });
            try {
                for (int i = 0; i < 5000; i++) {
                    Optional<LockHandle> h = lock.tryAcquire();
                    assertTrue(h.isPresent(), "try " + i + " found the free lock busy while status was reading it");
                    h.get().close();
                }
            } finally {
                done.set(true);
            }
            peeking.get(10, TimeUnit.SECONDS);
            assertTrue(peeks.get() > 0);
        }
    }

    @Test
    void theTableTellsHeldSharedAndFree() throws Exception {
        assumeTrue(KernelLockTable.usableIn(dir), "/proc/locks cannot be read or matched here");
        try (LockProvider provider = LockProvider.open("file:" + dir + "?strategy=os")) {
            var rw = provider.readWriteLock("report");
            try (LockHandle w = rw.writeLock().acquire(Duration.ofSeconds(5))) {
                assertEquals(LockStatus.State.HELD, provider.status("report").state());
            }
            try (LockHandle r = rw.readLock().acquire(Duration.ofSeconds(5))) {
                assertEquals(LockStatus.State.HELD_SHARED, provider.status("report").state());
            }
            assertEquals(LockStatus.State.FREE, provider.status("report").state());
        }
    }

    @Test
    void tableLinesAreParsedAndWaitersAndFlocksIgnored() {
        var write = KernelLockTable.Entry.parse("1: POSIX  ADVISORY  WRITE 4242 fd:01:1234567 0 EOF");
        assertEquals(new KernelLockTable.Entry(true, 0xfd, 0x01, 1234567), write);
        var read = KernelLockTable.Entry.parse("12: OFDLCK ADVISORY  READ  -1 00:2a:99 0 9223372036854775806");
        assertEquals(new KernelLockTable.Entry(false, 0x00, 0x2a, 99), read);
        assertNull(KernelLockTable.Entry.parse("1: -> POSIX  ADVISORY  WRITE 4243 fd:01:1234567 0 EOF"));
        assertNull(KernelLockTable.Entry.parse("2: FLOCK  ADVISORY  WRITE 17 fd:01:1234567 0 EOF"));
        assertNull(KernelLockTable.Entry.parse("garbage"));
        assertNull(KernelLockTable.Entry.parse("3: POSIX  ADVISORY  WRITE 17 not-a-device 0 EOF"));
    }

    @Test
    void aFileNobodyLocksIsFree() throws Exception {
        assumeTrue(KernelLockTable.usableIn(dir), "/proc/locks cannot be read or matched here");
        Path file = Files.createFile(dir.resolve("plain"));
        assertEquals(LockStatus.State.FREE, KernelLockTable.stateOf(file));
        assertNull(KernelLockTable.stateOf(dir.resolve("missing")));
    }
}
