package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.contract.HolderProcess;
import dev.kanuki.spi.ChangeSubscription;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
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

    /**
     * The kernel reports a directory's events in order: once a change of a sentinel file made
     * afterwards has been delivered, every earlier event has been too.
     */
    private static void awaitEarlierEvents(Path dir) throws Exception {
        Semaphore seen = new Semaphore(0);
        ChangeSubscription s = DirectoryWatcher.of(dir).subscribe(List.of("sentinel"), seen::release);
        try {
            Path sentinel = dir.resolve("sentinel");
            Files.writeString(sentinel, "x");
            assertTrue(seen.tryAcquire(30, TimeUnit.SECONDS), "the sentinel's change was not delivered");
            Files.delete(sentinel);
            seen.acquire();
        } finally {
            s.cancel();
        }
    }

    private static LockRequest request() {
        return new LockRequest("board", LockMode.EXCLUSIVE, 1, Duration.ofSeconds(30));
    }

    /**
     * A ttl waiter is woken by the removal of its entry only: taking the lock and renewing it
     * (creation, record rewrites) wake nobody, so many waiting processes are not all woken three
     * times per acquisition.
     */
    @ParameterizedTest
    @ValueSource(strings = {"mkdir", "symlink", "rename", "create"})
    void onlyTheEntrysRemovalWakesATtlWaiter(String strategy) throws Exception {
        Path dir = Files.createDirectories(tempDir.resolve("locks")).toRealPath();
        try (LockBackend waiter = backend(dir, strategy); LockBackend holder = backend(dir, strategy)) {
            AtomicInteger calls = new AtomicInteger();
            ChangeSubscription subscription = waiter.watchChanges(request(), calls::incrementAndGet);
            try {
                Grant grant = holder.tryAcquire(request()).orElseThrow();
                assertTrue(holder.renew(grant, Duration.ofSeconds(30)));
                awaitEarlierEvents(dir);
                assertEquals(0, calls.get(), "taking or renewing the lock woke the waiter");
                holder.release(grant);
                awaitEarlierEvents(dir);
                assertEquals(1, calls.get(), "the release woke the waiter once");
            } finally {
                subscription.cancel();
            }
        }
    }

    /**
     * A queue waiter is woken by changes of the queue file while it is near the head; one far
     * back is not (it retries on its timer, which also refreshes its place).
     */
    @org.junit.jupiter.api.Test
    void onlyQueueWaitersNearTheHeadAreWoken() throws Exception {
        Path dir = Files.createDirectories(tempDir.resolve("locks")).toRealPath();
        try (LockBackend queue = backend(dir, "queue")) {
            Grant held = queue.tryAcquire(request()).orElseThrow();
            List<LockRequest> waiting = new ArrayList<>();
            for (int i = 0; i < QueueLockBackend.WOKEN_PLACES + 1; i++) {
                LockRequest r = request();
                assertTrue(queue.tryAcquire(r).isEmpty());
                waiting.add(r);
            }
            AtomicInteger next = new AtomicInteger();
            AtomicInteger last = new AtomicInteger();
            ChangeSubscription nextOne = queue.watchChanges(waiting.get(0), next::incrementAndGet);
            ChangeSubscription lastOne = queue.watchChanges(waiting.get(waiting.size() - 1), last::incrementAndGet);
            try {
                assertTrue(queue.tryAcquire(request()).isEmpty()); // a new arrival appends to the queue file
                awaitEarlierEvents(dir);
                assertTrue(next.get() > 0, "the next in line was not woken");
                assertEquals(0, last.get(), "a waiter far from the head was woken");
            } finally {
                nextOne.cancel();
                lastOne.cancel();
            }
            queue.release(held);
        }
    }
}
