package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * 10,000 virtual threads (Java 21 and later; skipped on 17) each take and give back one lock on
 * {@code mem:} and {@code file:}: every fourth one of four shared names, the rest a name of their
 * own. Every thread is served, and no shared name ever has two holders. Not timed: the figures
 * (and a JFR count of pinned virtual threads) come from kanuki-bench's VirtualThreadsBench.
 */
@EnabledForJreRange(min = JRE.JAVA_21)
class VirtualThreadsTest {
    private static final int THREADS = 10_000;
    private static final int SHARED_NAMES = 4;

    @TempDir
    Path tempDir;

    @ParameterizedTest
    @ValueSource(strings = {"mem", "file"})
    @SuppressWarnings("try") // the handle is only held
    void tenThousandVirtualThreadsAreAllServed(String backend) throws Exception {
        String uri = backend.equals("mem") ? "mem:virtual-threads-" + System.nanoTime() : "file:" + tempDir.resolve("locks");
        AtomicInteger served = new AtomicInteger();
        AtomicInteger[] holders = new AtomicInteger[SHARED_NAMES];
        for (int i = 0; i < SHARED_NAMES; i++) {
            holders[i] = new AtomicInteger();
        }
        ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch done = new CountDownLatch(THREADS);
        ExecutorService virtualThreads = (ExecutorService) Executors.class
                .getMethod("newVirtualThreadPerTaskExecutor").invoke(null); // Java 21 API; kanuki compiles for 17
        try (LockProvider provider = LockProvider.open(uri)) {
            for (int i = 0; i < THREADS; i++) {
                int shared = i % SHARED_NAMES == 0 ? (i / SHARED_NAMES) % SHARED_NAMES : -1;
                String name = shared >= 0 ? "shared-" + shared : "own-" + i;
                virtualThreads.execute(() -> {
                    try {
                        go.await();
                        try (LockHandle h = provider.lock(name).acquire(Duration.ofMinutes(5))) {
                            if (shared >= 0) {
                                assertEquals(1, holders[shared].incrementAndGet(), "two holders of " + name);
                                Thread.yield();
                                holders[shared].decrementAndGet();
                            }
                        }
                        served.incrementAndGet();
                    } catch (Throwable e) {
                        failures.add(e);
                    } finally {
                        done.countDown();
                    }
                });
            }
            go.countDown();
            assertTrue(done.await(10, TimeUnit.MINUTES), "threads still running after 10 minutes");
        } finally {
            virtualThreads.shutdownNow();
        }
        if (!failures.isEmpty()) {
            AssertionError e = new AssertionError(failures.size() + " threads failed; the first: " + failures.peek());
            failures.stream().limit(3).forEach(e::addSuppressed);
            throw e;
        }
        assertEquals(THREADS, served.get());
    }
}
