package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.contract.HolderProcess;
import dev.kanuki.spi.ChangeSubscription;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The ttl strategies wake a polling waiter from the kernel's file notifications
 * ({@code LockBackend.watchChanges}): when a holder in another process releases, the waiter is
 * called, without polling; a cancelled subscription leaves nothing registered.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class WatchChangesTest {
    @TempDir
    Path tempDir;

    private static LockBackend backend(Path dir, String strategy) {
        return switch (strategy) {
            case "mkdir" -> new TtlFileLockBackend(dir, new MkdirStrategy());
            case "symlink" -> new TtlFileLockBackend(dir, new SymlinkStrategy());
            case "rename" -> new TtlFileLockBackend(dir, new RenameStrategy());
            case "create" -> new TtlFileLockBackend(dir, new CreateStrategy());
            case "queue" -> new QueueLockBackend(dir);
            default -> throw new IllegalArgumentException(strategy);
        };
    }

    @ParameterizedTest
    @ValueSource(strings = {"mkdir", "symlink", "rename", "create", "queue"})
    void releaseInAnotherProcessWakesTheWaiter(String strategy) throws Exception {
        Path dir = Files.createDirectories(tempDir.resolve("locks")).toRealPath();
        String uri = "file:" + dir + "?strategy=" + strategy;
        try (LockBackend backend = backend(dir, strategy)) {
            LockRequest waiting = new LockRequest("board", LockMode.EXCLUSIVE, 1, Duration.ofSeconds(30));
            Semaphore calls = new Semaphore(0);
            HolderProcess holder = HolderProcess.start(uri, "board", "exclusive", tempDir.resolve("holder.err"));
            ChangeSubscription subscription = backend.watchChanges(waiting, calls::release);
            assertNotNull(subscription, "a local directory can be watched");
            try {
                assertTrue(backend.tryAcquire(waiting).isEmpty(), "the holder process holds it");
                calls.drainPermits(); // our own attempt may have changed the entry (the queue: our arrival)
                holder.close(); // releases and exits
                assertTrue(calls.tryAcquire(30, TimeUnit.SECONDS), "the release did not wake the waiter");
                var grant = backend.tryAcquire(waiting);
                assertTrue(grant.isPresent(), "woken, but the lock is not free");
                backend.release(grant.get());
            } finally {
                subscription.cancel();
            }
            assertEquals(0, DirectoryWatcher.of(dir).watchedNames(), "a cancelled subscription is still registered");
        }
    }
}
