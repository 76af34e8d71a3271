package dev.kanuki.file;

import dev.kanuki.spi.SafeNames;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.contract.HolderProcess;
import dev.kanuki.file.EntryStrategy.Observed;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The ttl strategies in a hostile lock directory, and the stale-lock race (A and B see an old
 * lock, A removes it, C locks, B must not remove C's lock).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Tag("slow")
class FileTtlHostileEnvironmentTest {
    @TempDir
    Path tempDir;

    private static EntryStrategy strategy(String name) {
        return switch (name) {
            case "mkdir" -> new MkdirStrategy();
            case "symlink" -> new SymlinkStrategy();
            case "rename" -> new RenameStrategy();
            case "create" -> new CreateStrategy();
            default -> throw new IllegalArgumentException(name);
        };
    }

    private Path locks() throws Exception {
        return Files.createDirectories(tempDir.resolve("locks"));
    }

    private static LockRequest request(String name, Duration lease) {
        return new LockRequest(name, LockMode.EXCLUSIVE, 1, lease);
    }

    @ParameterizedTest
    @ValueSource(strings = {"mkdir", "rename", "create"})
    void plantedSymlinkIsNeitherFollowedNorDeleted(String name) throws Exception {
        Path dir = locks();
        EntryStrategy strategy = strategy(name);
        Path entry = strategy.entry(dir, SafeNames.stem("board", "L"));
        Path victim = Files.writeString(tempDir.resolve("victim.txt"), "precious");
        Files.createSymbolicLink(entry, victim);
        try (LockProvider provider = LockProvider.open("file:" + dir + "?strategy=" + name)) {
            LockBackendException e = assertThrows(LockBackendException.class, () -> provider.lock("board").tryAcquire());
            assertTrue(e.getMessage().contains(entry.toString()), e.getMessage());
        }
        assertTrue(Files.isSymbolicLink(entry), "the planted link was removed");
        assertEquals("precious", Files.readString(victim));
    }

    @ParameterizedTest
    @ValueSource(strings = {"symlink", "queue"})
    void plantedRegularFileOrLinkIsNotDeleted(String name) throws Exception {
        Path dir = locks();
        String stem = SafeNames.stem("board", "L");
        Path entry = name.equals("queue") ? dir.resolve(stem + ".queue") : new SymlinkStrategy().entry(dir, stem);
        Path victim = Files.writeString(tempDir.resolve("victim.txt"), "precious");
        if (name.equals("queue")) {
            Files.createSymbolicLink(entry, victim);
        } else {
            Files.writeString(entry, "not a link");
        }
        try (LockProvider provider = LockProvider.open("file:" + dir + "?strategy=" + name)) {
            assertThrows(LockBackendException.class, () -> provider.lock("board").tryAcquire());
        }
        assertTrue(Files.exists(entry, java.nio.file.LinkOption.NOFOLLOW_LINKS), "the planted entry was removed");
        assertEquals("precious", Files.readString(victim));
    }

    @ParameterizedTest
    @ValueSource(strings = {"mkdir", "symlink", "rename", "create"})
    void corruptedRecordIsReportedThenBrokenOnceOld(String name) throws Exception {
        Path dir = locks();
        EntryStrategy strategy = strategy(name);
        Path entry = strategy.entry(dir, SafeNames.stem("board", "L"));
        switch (name) {
            case "mkdir" -> Files.writeString(Files.createDirectory(entry).resolve("owner"), "garbage\u0000\u00ff");
            case "symlink" -> Files.createSymbolicLink(entry, Path.of("K1 garbage 12 34"));
            default -> Files.writeString(entry, "K1 0123 torn-in-the-midd");
        }
        // a 2 s lease: the handle taken below must outlive a renewal missed on a loaded machine (a 300 ms
        // lease ran out between acquire and verify in a clean-clone run beside two busy loops)
        try (LockProvider provider = LockProvider.open("file:" + dir + "?strategy=" + name + "&lease=2s")) {
            assertEquals(LockStatus.State.UNKNOWN, provider.status("board").state());
            assertTrue(provider.lock("board").tryAcquire().isEmpty(), "a fresh entry with an unreadable record was broken at once");
            Thread.sleep(2_500); // older than the lease now
            try (LockHandle h = provider.lock("board").acquire(Duration.ofSeconds(5))) {
                h.verify();
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mkdir", "symlink", "rename", "create"})
    void breakerNeverRemovesALockTakenAfterItsFirstLook(String name) throws Exception {
        // The stale-lock race: A and B see an old lock, A removes it, C locks, B must not remove C's lock.
        Path dir = locks();
        EntryStrategy strategy = strategy(name);
        TtlFileLockBackend a = new TtlFileLockBackend(dir, strategy);
        TtlFileLockBackend b = new TtlFileLockBackend(dir, strategy);
        Duration lease = Duration.ofMillis(200);
        Grant old = a.tryAcquire(request("board", lease)).orElseThrow();
        Thread.sleep(300); // the old holder "crashed": its lease ran out
        String stem = b.stem("board", "L");
        Path entry = strategy.entry(dir, stem);
        Observed seenByB = strategy.read(entry);
        assertTrue(TtlFileLockBackend.isStale(seenByB, lease.toMillis()));

        Optional<Grant> c = a.tryAcquire(request("board", Duration.ofSeconds(30))); // A breaks it, C (here: a) locks
        assertTrue(c.isPresent(), "the stale lock was not broken");
        assertTrue(c.get().fencingToken() > old.fencingToken());

        assertEquals(TtlFileLockBackend.BreakResult.CHANGED, b.breakStale(stem, entry, seenByB, lease.toMillis(),
                BreakerLock.ttlFor(lease.toMillis()), false),
                "B removed C's fresh lock");
        assertTrue(a.verify(c.get()), "C's lock is gone");
        a.release(c.get());
    }

    @ParameterizedTest
    @ValueSource(strings = {"mkdir", "symlink", "rename", "create"})
    void racingBreakersLetExactlyOneIn(String name) throws Exception {
        Path dir = locks();
        EntryStrategy strategy = strategy(name);
        int contenders = 3;
        List<TtlFileLockBackend> backends = new ArrayList<>();
        for (int i = 0; i < contenders; i++) {
            backends.add(new TtlFileLockBackend(dir, strategy));
        }
        ExecutorService pool = Executors.newFixedThreadPool(contenders);
        CyclicBarrier barrier = new CyclicBarrier(contenders);
        try {
            for (int round = 0; round < 15; round++) {
                // A 100 ms lease can run out before an acquisition on a loaded machine is done, and
                // then it is refused (its record may have landed after the lease): try again.
                java.util.concurrent.atomic.AtomicReference<Grant> first = new java.util.concurrent.atomic.AtomicReference<>();
                org.awaitility.Awaitility.await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10)).until(() -> {
                    backends.get(0).tryAcquire(request("board", Duration.ofMillis(100))).ifPresent(first::set);
                    return first.get() != null;
                });
                Grant stale = first.get();
                Thread.sleep(120);
                List<Future<Optional<Grant>>> results = new ArrayList<>();
                for (TtlFileLockBackend backend : backends) {
                    Callable<Optional<Grant>> attempt = () -> {
                        barrier.await(10, TimeUnit.SECONDS);
                        return backend.tryAcquire(request("board", Duration.ofSeconds(30)));
                    };
                    results.add(pool.submit(attempt));
                }
                List<Grant> winners = new ArrayList<>();
                for (int i = 0; i < contenders; i++) {
                    results.get(i).get(30, TimeUnit.SECONDS).ifPresent(winners::add);
                }
                assertTrue(winners.size() <= 1, "round " + round + ": " + winners.size() + " breakers got the lock");
                for (Grant g : winners) {
                    assertTrue(backends.get(0).verify(g), "round " + round + ": the winner does not hold the lock");
                    assertTrue(g.fencingToken() > stale.fencingToken());
                    backends.get(0).release(g);
                }
                if (winners.isEmpty()) {
                    // every breaker backed off (one held the breaker while the others looked): the
                    // lock is still stale and the next attempt takes it
                    Grant late = backends.get(1).tryAcquire(request("board", Duration.ofSeconds(30))).orElseThrow();
                    backends.get(1).release(late);
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mkdir", "queue"})
    void shutdownHookReleasesLocksOfAnExitingJvm(String name) throws Exception {
        Path dir = locks();
        String uri = "file:" + dir + "?strategy=" + name;
        HolderProcess holder = HolderProcess.start(uri, "board", "exclusive", tempDir.resolve("holder.err"), List.of("exit"));
        assertEquals(0, holder.waitForExit());
        try (LockProvider provider = LockProvider.open(uri)) {
            // Released by the hook: gone, not merely stale (a stale entry would also be taken, later).
            assertEquals(LockStatus.State.FREE, provider.status("board").state(), "System.exit left the lock behind");
        }
        holder.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"mkdir", "symlink", "create", "queue"})
    void stoppedHolderLosesItsLockWhenTheLeaseRunsOut(String name) throws Exception {
        Path dir = locks();
        String uri = "file:" + dir + "?strategy=" + name + "&lease=1s";
        try (LockProvider provider = LockProvider.open(uri);
             HolderProcess holder = HolderProcess.start(uri, "board", "exclusive", tempDir.resolve("holder.err"))) {
            assertTrue(provider.lock("board").tryAcquire().isEmpty());
            Process stop = new ProcessBuilder("kill", "-STOP", Long.toString(holder.pid())).start();
            assertEquals(0, stop.waitFor());
            long start = System.nanoTime();
            try (LockHandle h = provider.lock("board").acquire(Duration.ofSeconds(10))) {
                long waited = (System.nanoTime() - start) / 1_000_000;
                assertTrue(waited >= 200, "taken before the stopped holder's lease ran out: " + waited + "ms");
                assertTrue(h.fencingToken() > holder.token());
                new ProcessBuilder("kill", "-CONT", Long.toString(holder.pid())).start().waitFor();
                holder.close(); // it wakes up, finds its lock lost, and must not remove ours
                h.verify();
                assertNotNull(provider.status("board").owner().orElse(null));
                assertEquals(ProcessHandle.current().pid(), provider.status("board").owner().get().pid());
            }
        }
    }
}
