package dev.kanuki.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Very many asynchronous waiters on one name: every one served, in order, on a normal stack. */
class AsyncScaleTest {
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
    void oneHundredThousandWaitersClosingInTheirCallbacksAreAllServedInOrder() throws Exception {
        int waiters = 100_000;
        DistributedLock lock = provider.lock("crowded");
        LockHandle first = lock.acquire(Duration.ofSeconds(5));
        ConcurrentLinkedQueue<Integer> served = new ConcurrentLinkedQueue<>();
        List<CompletableFuture<Void>> done = new ArrayList<>(waiters);
        for (int i = 0; i < waiters; i++) {
            int index = i;
            // The usual way to use the future: do the work in the callback, then close the handle.
            done.add(lock.acquireAsync(Duration.ofMinutes(5)).thenAccept(handle -> {
                served.add(index);
                handle.close();
            }));
        }
        // Release from a thread with the default stack size, as an application thread would.
        AtomicReference<Throwable> releaseFailure = new AtomicReference<>();
        Thread releaser = new Thread(() -> {
            try {
                first.close();
            } catch (Throwable t) {
                releaseFailure.set(t);
            }
        }, "releaser");
        releaser.start();
        releaser.join(TimeUnit.MINUTES.toMillis(2));
        CompletableFuture.allOf(done.toArray(CompletableFuture[]::new)).get(3, TimeUnit.MINUTES);
        assertEquals(null, releaseFailure.get());
        assertEquals(waiters, served.size(), "every waiter served once");
        int expected = 0;
        for (int index : served) {
            assertEquals(expected++, index, "served in arrival order");
        }
        assertTrue(lock.tryAcquire().isPresent(), "the lock is free after the last one");
    }
}
