package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.contract.HolderProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An interrupt must not strand a lock: a {@code FileChannel} is closed by an interrupt of the
 * thread using it, which used to lose the file write that gives the lock up (a queue waiter's
 * removal; a release), so the next acquirer waited out the whole lease (here 60 s).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class InterruptedFileIoTest {
    private static final Duration LEASE = Duration.ofSeconds(60);
    /** Far below the lease: "at once", with room for a loaded machine. */
    private static final Duration AT_ONCE = Duration.ofSeconds(20);

    @TempDir
    Path tempDir;

    private String uri(String strategy) throws Exception {
        Path dir = Files.createDirectories(tempDir.resolve("locks"));
        return "file:" + dir + "?strategy=" + strategy + "&lease=" + LEASE.toSeconds() + "s";
    }

    @ParameterizedTest
    @ValueSource(strings = {"queue", "mkdir", "symlink", "rename", "create"})
    void anInterruptedWaiterLeavesNothingThatBlocksTheNextAcquirer(String strategy) throws Exception {
        String uri = uri(strategy);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        // The holder in another process: in one JVM a second waiter would wait in the engine's
        // gate and never reach the backend.
        HolderProcess holder = HolderProcess.start(uri, "q", "exclusive", tempDir.resolve("holder.err"));
        try (LockProvider waiterSide = LockProvider.open(uri)) {
            AtomicReference<Thread> waiter = new AtomicReference<>();
            Future<?> waiting = pool.submit(() -> {
                waiter.set(Thread.currentThread());
                try (LockHandle h = waiterSide.lock("q").acquire(Duration.ofSeconds(90))) {
                    return h.fencingToken();
                }
            });
            Awaitility.await("the waiter waiting").atMost(AT_ONCE).until(() -> waiter.get() != null
                    && (waiter.get().getState() == Thread.State.WAITING || waiter.get().getState() == Thread.State.TIMED_WAITING)
                    && (!strategy.equals("queue") || arrivals(uri) >= 2));
            waiter.get().interrupt();
            Awaitility.await("the interrupted waiter giving up").atMost(AT_ONCE).until(waiting::isDone);
            holder.close(); // releases
            try (LockProvider next = LockProvider.open(uri)) {
                Optional<LockHandle> taken;
                try {
                    taken = Optional.of(next.lock("q").acquire(AT_ONCE));
                } catch (RuntimeException e) {
                    taken = Optional.empty();
                }
                assertTrue(taken.isPresent(), "the next acquirer did not get the lock within " + AT_ONCE.toSeconds()
                        + " s after the holder released: the interrupted waiter's place is still there (lease "
                        + LEASE.toSeconds() + " s)");
                taken.get().close();
            }
        } finally {
            holder.kill();
            pool.shutdownNow();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"queue", "mkdir", "symlink", "rename", "create"})
    void aReleaseFromAnInterruptedThreadFreesTheLockAtOnce(String strategy) throws Exception {
        String uri = uri(strategy);
        try (LockProvider holderSide = LockProvider.open(uri); LockProvider next = LockProvider.open(uri)) {
            LockHandle held = holderSide.lock("r").acquire(Duration.ofSeconds(30));
            Thread.currentThread().interrupt();
            try {
                held.close();
            } finally {
                Thread.interrupted(); // clear it for the rest of the test
            }
            Optional<LockHandle> taken = next.lock("r").tryAcquire();
            assertTrue(taken.isPresent(), "a release made by an interrupted thread left the lock held (lease "
                    + LEASE.toSeconds() + " s)");
            taken.get().close();
        }
    }

    /** @return the arrival lines in the queue files of the directory (the holder's and the waiter's) */
    private static long arrivals(String uri) throws Exception {
        String all = queueLines(uri);
        return all.lines().filter(l -> l.startsWith("A ")).count();
    }

    private static String queueLines(String uri) throws Exception {
        Path dir = Path.of(uri.substring("file:".length(), uri.indexOf('?')));
        StringBuilder all = new StringBuilder();
        try (var files = Files.list(dir)) {
            for (Path p : (Iterable<Path>) files::iterator) {
                if (p.getFileName().toString().endsWith(".queue")) {
                    all.append(Files.readString(p));
                }
            }
        }
        return all.toString();
    }
}
