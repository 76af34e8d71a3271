package dev.kanuki.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LeaseKind;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockRequest;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What {@link EngineLockProvider#close()} does with backend calls still in flight, on a fake
 * backend whose attempt the test holds: a grant that arrives for a waiter the close ended is
 * released before the backend closes (a real backend could not release it through closed
 * connections, and the lock would stay taken for its lease), and a call that never ends does not
 * keep close from returning.
 */
class ProviderCloseTest {

    /**
     * A backend whose first attempt grants at once and whose second waits for the test, then
     * grants; it records releases and close.
     */
    static final class SlowAttempt extends FakeBackend {
        final CountDownLatch entered = new CountDownLatch(1);
        final CountDownLatch answer = new CountDownLatch(1);
        final List<String> events = new CopyOnWriteArrayList<>();
        final CountDownLatch released = new CountDownLatch(1);
        final boolean uninterruptible;
        private final java.util.concurrent.atomic.AtomicInteger attempts = new java.util.concurrent.atomic.AtomicInteger();

        SlowAttempt(boolean uninterruptible) {
            super(LeaseKind.TTL);
            this.uninterruptible = uninterruptible;
        }

        @Override
        public Optional<Grant> tryAcquire(LockRequest request) {
            if (attempts.incrementAndGet() == 1) {
                return Optional.of(grant());
            }
            entered.countDown();
            // A server round trip that is answered late (the engine does not interrupt a try).
            boolean answered = false;
            while (!answered) {
                try {
                    answered = answer.await(60, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    if (!uninterruptible) {
                        Thread.currentThread().interrupt();
                        return Optional.empty();
                    }
                }
            }
            return Optional.of(grant());
        }

        private static Grant grant() {
            return new Grant() {
                @Override
                public long fencingToken() {
                    return 1;
                }
            };
        }

        @Override
        public void release(Grant grant) {
            events.add("release");
            released.countDown();
        }

        @Override
        public void close() {
            events.add("close");
        }
    }

    /**
     * Holds the lock, queues an asynchronous waiter behind it and releases in another thread,
     * whose handoff makes the waiter's (slow) attempt.
     *
     * @return the waiter's future
     */
    private static CompletableFuture<LockHandle> waiterWithAttemptInFlight(LockProvider provider, SlowAttempt backend)
            throws Exception {
        LockHandle holder = provider.lock("x").acquire(Duration.ofSeconds(10));
        CompletableFuture<LockHandle> waiter = provider.lock("x").acquireAsync(Duration.ofSeconds(60));
        Thread releasing = new Thread(holder::close, "releasing-holder");
        releasing.setDaemon(true);
        releasing.start();
        assertTrue(backend.entered.await(30, TimeUnit.SECONDS), "the waiter's attempt never started");
        return waiter;
    }

    private static Throwable endOf(CompletableFuture<LockHandle> waiter) throws Exception {
        try {
            LockHandle h = waiter.get(30, TimeUnit.SECONDS);
            h.close();
            throw new AssertionError("the waiter got a handle though the provider closed");
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    @Test
    void aGrantInFlightAtCloseIsReleasedBeforeTheBackendCloses() throws Exception {
        SlowAttempt backend = new SlowAttempt(false);
        LockProvider provider = EngineLockProvider.open("test:slow-attempt", backend);
        CompletableFuture<LockHandle> waiter = waiterWithAttemptInFlight(provider, backend);
        CompletableFuture<Void> closing = CompletableFuture.runAsync(provider::close);
        // The waiter ends at once with the closed error, while its attempt is still in flight.
        Throwable end = endOf(waiter);
        assertTrue(end instanceof IllegalStateException, "expected the closed error, got " + end);
        assertFalse(backend.events.contains("close"), "the backend closed under an attempt in flight");
        backend.answer.countDown(); // the grant arrives for a waiter that is gone
        closing.get(30, TimeUnit.SECONDS);
        assertEquals(List.of("release", "release", "close"), backend.events,
                "the holder's release, then the late grant's, and only then the backend's close");
    }

    @Test
    void closeIsBoundedWhenABackendCallDoesNotEnd() throws Exception {
        SlowAttempt backend = new SlowAttempt(true);
        LockProvider provider = EngineLockProvider.open("test:stuck-attempt", backend);
        try {
            CompletableFuture<LockHandle> waiter = waiterWithAttemptInFlight(provider, backend);
            CompletableFuture<Void> closing = CompletableFuture.runAsync(provider::close);
            // The documented bound plus a loaded machine's slack; the point is that it returns.
            closing.get(EngineLockProvider.CLOSE_BOUND.toSeconds() + 30, TimeUnit.SECONDS);
            assertTrue(backend.events.contains("close"), "close returned without closing the backend");
            Throwable end = endOf(waiter);
            assertTrue(end instanceof IllegalStateException, "expected the closed error, got " + end);
        } finally {
            backend.answer.countDown();
        }
        // The grant that finally arrives is released, not handed out.
        assertTrue(backend.released.await(30, TimeUnit.SECONDS), "the grant that arrived after close was not released");
    }
}
