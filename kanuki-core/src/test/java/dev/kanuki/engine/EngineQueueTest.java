package dev.kanuki.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.DistributedReadWriteLock;
import dev.kanuki.LockException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The in-JVM gate: order of service, readers and writers, interrupts, closed providers. */
class EngineQueueTest {
    LockProvider provider;

    @BeforeEach
    void open() {
        provider = LockProvider.open("mem:" + UUID.randomUUID());
    }

    @AfterEach
    void close() {
        provider.close();
    }

    @Test
    void waitersAreServedInArrivalOrder() throws Exception {
        var lock = provider.lock("fifo");
        ConcurrentLinkedQueue<Integer> served = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<Void>> all = new ArrayList<>();
        try (LockHandle held = lock.acquire(Duration.ofSeconds(1))) {
            for (int i = 0; i < 50; i++) {
                int n = i;
                all.add(lock.acquireAsync(Duration.ofSeconds(30)).thenAccept(h -> {
                    served.add(n);
                    h.close();
                }));
            }
        }
        CompletableFuture.allOf(all.toArray(new CompletableFuture[0])).get(30, TimeUnit.SECONDS);
        List<Integer> expected = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            expected.add(i);
        }
        assertEquals(expected, new ArrayList<>(served));
    }

    @Test
    void aQueuedWriterIsNotOvertakenByLaterReaders() throws Exception {
        DistributedReadWriteLock rw = provider.readWriteLock("rw");
        LockHandle reader = rw.readLock().acquire(Duration.ofSeconds(1));
        CompletableFuture<LockHandle> writer = rw.writeLock().acquireAsync(Duration.ofSeconds(30));
        CompletableFuture<LockHandle> lateReader = rw.readLock().acquireAsync(Duration.ofSeconds(30));
        Thread.sleep(100);
        assertFalse(writer.isDone());
        assertFalse(lateReader.isDone(), "a reader that came after a waiting writer overtook it");
        reader.close();
        LockHandle w = writer.get(10, TimeUnit.SECONDS);
        assertFalse(lateReader.isDone());
        w.close();
        lateReader.get(10, TimeUnit.SECONDS).close();
    }

    @Test
    void interruptingAWaiterStopsItAndKeepsTheFlag() throws Exception {
        var lock = provider.lock("interrupt");
        try (LockHandle held = lock.acquire(Duration.ofSeconds(1))) {
            CountDownLatch started = new CountDownLatch(1);
            CompletableFuture<Throwable> outcome = new CompletableFuture<>();
            Thread waiter = new Thread(() -> {
                started.countDown();
                try {
                    lock.acquire(Duration.ofSeconds(30)).close();
                    outcome.complete(null);
                } catch (Throwable t) {
                    outcome.complete(Thread.currentThread().isInterrupted() ? t : new AssertionError("flag lost", t));
                }
            });
            waiter.start();
            started.await();
            Thread.sleep(100);
            waiter.interrupt();
            Throwable t = outcome.get(10, TimeUnit.SECONDS);
            assertTrue(t instanceof LockException && t.getCause() instanceof InterruptedException, String.valueOf(t));
        }
        assertTrue(lock.tryAcquire().map(h -> {
            h.close();
            return true;
        }).orElse(false), "an interrupted waiter kept the lock");
    }

    @Test
    void aClosedProviderRefusesNewWork() {
        var lock = provider.lock("closed");
        provider.close();
        assertThrows(IllegalStateException.class, lock::tryAcquire);
        provider.close(); // idempotent
    }

    @Test
    void handlesFromOneProviderExcludeAnotherOnTheSameStore() {
        String uri = "mem:" + UUID.randomUUID();
        try (LockProvider a = LockProvider.open(uri); LockProvider b = LockProvider.open(uri)) {
            try (LockHandle held = a.lock("shared-store").acquire(Duration.ofSeconds(1))) {
                assertTrue(b.lock("shared-store").tryAcquire().isEmpty());
            }
            b.lock("shared-store").tryAcquire().orElseThrow().close();
        }
    }
}
