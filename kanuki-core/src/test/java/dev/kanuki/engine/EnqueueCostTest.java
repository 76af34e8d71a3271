package dev.kanuki.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.Capabilities;
import dev.kanuki.LeaseKind;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.spi.BackendProviders;
import dev.kanuki.spi.ChangeSubscription;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Enqueuing an asynchronous waiter costs its caller at most one backend attempt and starts no
 * thread of its own, whatever wake-up the backend has: change notifications, a blocking wait, or
 * neither. Many waiters on as many busy names are then all served once the names free.
 */
class EnqueueCostTest {

    @ParameterizedTest
    @ValueSource(strings = {"notifies", "blocks", "polls"})
    void enqueuingCostsTheCallerOneAttemptAndNoThread(String kind) throws Exception {
        // Polling waiters pace themselves by their number (so a crowd does not flood the store):
        // fewer of them keep this test short.
        int waiters = kind.equals("polls") ? 200 : 1_000;
        BusyUntilFreed backend = new BusyUntilFreed(kind, Thread.currentThread());
        try (LockProvider provider = BackendProviders.open("busy:" + kind + "?poll=200ms", backend)) {
            int threadsBefore = Thread.activeCount();
            List<CompletableFuture<LockHandle>> futures = new ArrayList<>();
            for (int i = 0; i < waiters; i++) {
                futures.add(provider.lock("name-" + i).acquireAsync(Duration.ofMinutes(2)));
            }
            assertEquals(waiters, backend.callerAttempts.get(), "attempts made in the enqueuing thread");
            assertTrue(Thread.activeCount() - threadsBefore <= 40,
                    "threads added: " + (Thread.activeCount() - threadsBefore));

            backend.free();
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(2, TimeUnit.MINUTES);
            for (CompletableFuture<LockHandle> waiter : futures) {
                waiter.join().close();
            }
            assertEquals(waiters, backend.granted.get(), "every waiter served once");
        }
    }

    /** Every name is busy until {@link #free()}; counts the attempts made in one thread. */
    static final class BusyUntilFreed implements LockBackend {
        private final String kind;
        private final Thread caller;
        final AtomicInteger callerAttempts = new AtomicInteger();
        final AtomicInteger granted = new AtomicInteger();
        private final AtomicLong tokens = new AtomicLong();
        private final Set<String> held = ConcurrentHashMap.newKeySet();
        private final List<Runnable> watchers = new CopyOnWriteArrayList<>();
        private volatile boolean busy = true;

        BusyUntilFreed(String kind, Thread caller) {
            this.kind = kind;
            this.caller = caller;
        }

        void free() {
            synchronized (this) {
                busy = false;
                notifyAll();
            }
            watchers.forEach(Runnable::run);
        }

        @Override
        public Capabilities capabilities() {
            return Capabilities.builder(LeaseKind.SESSION).build();
        }

        @Override
        public String scope() {
            return "busy:" + System.identityHashCode(this);
        }

        @Override
        public Optional<Grant> tryAcquire(LockRequest request) {
            if (Thread.currentThread() == caller) {
                callerAttempts.incrementAndGet();
            }
            if (busy || !held.add(request.name())) {
                return Optional.empty();
            }
            granted.incrementAndGet();
            long token = tokens.incrementAndGet();
            String name = request.name();
            return Optional.of(new Grant() {
                @Override
                public long fencingToken() {
                    return token;
                }

                @Override
                public String toString() {
                    return name;
                }
            });
        }

        @Override
        public boolean blockingWait() {
            return kind.equals("blocks");
        }

        @Override
        public Optional<Grant> awaitAcquire(LockRequest request, Duration maxWait) throws InterruptedException {
            synchronized (this) {
                long until = System.nanoTime() + maxWait.toNanos();
                while (busy && System.nanoTime() < until) {
                    TimeUnit.NANOSECONDS.timedWait(this, Math.max(1, until - System.nanoTime()));
                }
            }
            return tryAcquire(request);
        }

        @Override
        public ChangeSubscription watchChanges(LockRequest request, Runnable onChange) {
            if (!kind.equals("notifies")) {
                return null;
            }
            watchers.add(onChange);
            return () -> watchers.remove(onChange);
        }

        @Override
        public void release(Grant grant) {
            held.remove(grant.toString());
        }

        @Override
        public boolean verify(Grant grant) {
            return true;
        }

        @Override
        public LockStatus status(String name) {
            return null;
        }

        @Override
        public void close() {
        }
    }
}
