package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.contract.ManyLocksHolder;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Many waiters on names another process holds, on a backend that waits by blocking (kernel
 * locks): only {@code waitThreads} of them block, the others keep trying, and all are served
 * once the other process lets go.
 */
class ManyWaitersTest {
    @TempDir
    Path tempDir;

    @Test
    void blockingWaitsAreBoundedAndEveryWaiterIsServed() throws Exception {
        String uri = "file:" + tempDir.resolve("locks") + "?strategy=os&waitThreads=3";
        int names = 150;
        int lineOnFirstName = 30;
        try (ManyLocksHolder holder = ManyLocksHolder.start(uri, "n", names, tempDir.resolve("holder.err"));
            // (stderr of the holder goes to holder.err in the temp directory)
             LockProvider provider = LockProvider.open(uri)) {
            List<CompletableFuture<Void>> served = new ArrayList<>();
            ConcurrentLinkedQueue<Integer> firstNameOrder = new ConcurrentLinkedQueue<>();
            for (int i = 0; i < names; i++) {
                served.add(provider.lock("n" + i).acquireAsync(Duration.ofMinutes(3)).thenAccept(LockHandle::close));
            }
            for (int i = 0; i < lineOnFirstName; i++) {
                int index = i;
                served.add(provider.lock("n0").acquireAsync(Duration.ofMinutes(3)).thenAccept(h -> {
                    firstNameOrder.add(index);
                    h.close();
                }));
            }
            // Synchronous waiters beyond the bound wait in their own threads, without a slot.
            ExecutorService callers = Executors.newFixedThreadPool(4);
            List<Future<Long>> sync = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                String name = "n" + (names - 1 - i);
                sync.add(callers.submit(() -> {
                    try (LockHandle h = provider.lock(name).acquire(Duration.ofMinutes(3))) {
                        return h.fencingToken();
                    }
                }));
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            int mostBlocked = 0;
            while (System.nanoTime() < deadline) {
                mostBlocked = Math.max(mostBlocked, threadsNamed("kanuki-waiter"));
                Thread.sleep(50);
            }
            assertTrue(mostBlocked <= 3, "at most waitThreads blocking threads, saw " + mostBlocked);
            assertTrue(mostBlocked >= 1, "no waiter blocked in the backend: the count sees nothing");
            assertTrue(served.stream().noneMatch(CompletableFuture::isDone), "nobody served while the other process holds");

            holder.releaseAll();
            CompletableFuture.allOf(served.toArray(CompletableFuture[]::new)).get(3, TimeUnit.MINUTES);
            for (Future<Long> f : sync) {
                f.get(3, TimeUnit.MINUTES);
            }
            callers.shutdown();
            List<Integer> order = new ArrayList<>(firstNameOrder);
            for (int i = 0; i < order.size(); i++) {
                assertEquals(i, order.get(i), "waiters on one name served in arrival order: " + order);
            }
            assertEquals(lineOnFirstName, order.size());
        }
    }

    /**
     * @return the threads named {@code prefix}… that are blocked in the backend's wait: the pool
     *     keeps idle threads a while, and a thread that just gave its slot back may still be
     *     finishing while another takes the slot, so counting every thread of the pool would
     *     count those too
     */
    private static int threadsNamed(String prefix) {
        int n = 0;
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            Thread t = e.getKey();
            if (t.isAlive() && t.getName().startsWith(prefix)
                    && Arrays.stream(e.getValue()).anyMatch(f -> f.getMethodName().equals("awaitAcquire"))) {
                n++;
            }
        }
        return n;
    }
}
