package dev.kanuki.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LeaseKind;
import dev.kanuki.LockHandle;
import dev.kanuki.LockLostException;
import dev.kanuki.LockProvider;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The lease watchdog: session checks that hang do not queue behind each other. */
class LeaseWatchdogTest {

    /**
     * Session locks whose checks hang, as checks on a dead server's connections do until their
     * timeout: a check blocks until as many checks run at once as the watchdog should allow (or
     * two seconds pass), then reports the lock lost. One at a time, every check would take the
     * full two seconds and never see another.
     */
    static final class HangingChecks extends FakeBackend {
        private final int expectedAtOnce;
        private int running;
        private boolean reached;
        final AtomicInteger mostAtOnce = new AtomicInteger();
        private final AtomicLong tokens = new AtomicLong();

        HangingChecks(int expectedAtOnce) {
            super(LeaseKind.SESSION);
            this.expectedAtOnce = expectedAtOnce;
        }

        @Override
        public Optional<Grant> tryAcquire(LockRequest request) {
            long token = tokens.incrementAndGet();
            return Optional.of(() -> token);
        }

        @Override
        public synchronized boolean verify(Grant grant) {
            running++;
            mostAtOnce.accumulateAndGet(running, Math::max);
            if (running >= expectedAtOnce) {
                reached = true;
                notifyAll();
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            try {
                for (long left = deadline - System.nanoTime(); !reached && left > 0; left = deadline - System.nanoTime()) {
                    TimeUnit.NANOSECONDS.timedWait(this, left);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                running--;
            }
            return false; // the connection was dead: lost
        }
    }

    @Test
    @Timeout(60)
    void checksOfManyLocksRunSideBySide() throws Exception {
        int locks = LeaseWatchdog.PARALLEL_CHECKS * 2;
        HangingChecks backend = new HangingChecks(LeaseWatchdog.PARALLEL_CHECKS);
        try (LockProvider provider = EngineLockProvider.open("test:hanging-checks", backend)) {
            List<LockHandle> handles = new ArrayList<>();
            for (int i = 0; i < locks; i++) {
                handles.add(provider.lock("lock-" + i).tryAcquire().orElseThrow());
            }
            List<CompletableFuture<LockLostException>> lost = handles.stream().map(LockHandle::lost).toList();
            // One at a time would take 16 × 2 s and never see two checks at once.
            CompletableFuture.allOf(lost.toArray(new CompletableFuture[0])).get(45, TimeUnit.SECONDS);
            assertEquals(LeaseWatchdog.PARALLEL_CHECKS, backend.mostAtOnce.get(),
                    "the watchdog must run up to " + LeaseWatchdog.PARALLEL_CHECKS + " checks at once, no more");
            assertTrue(lost.stream().allMatch(f -> f.join().getMessage().contains("no longer records")));
            handles.forEach(LockHandle::close);
        }
    }

    /** A ttl backend whose renewals hang, as on a stalled connection: the first renewal never answers. */
    static final class HangingRenewals extends FakeBackend {
        private final java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);
        private final AtomicLong tokens = new AtomicLong();

        HangingRenewals() {
            super(LeaseKind.TTL);
        }

        @Override
        public Optional<Grant> tryAcquire(LockRequest request) {
            long token = tokens.incrementAndGet();
            return Optional.of(() -> token);
        }

        @Override
        public boolean renew(Grant grant, java.time.Duration lease) {
            try {
                closed.await(); // the connection is stalled: no answer, no error, until the provider closes
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            return true;
        }

        @Override
        public void close() {
            closed.countDown();
        }
    }

    /**
     * Found by the fault suite (a Redis holder's connection stalled by a proxy): a renewal that
     * hangs must not hold back the loss. The lease runs out on the server, another process takes
     * the lock, and the holder must have been told by then, not when the hanging call gives up.
     */
    @Test
    @Timeout(60)
    void aLeaseWhoseRenewalHangsIsLostWhenItRunsOut() throws Exception {
        HangingRenewals backend = new HangingRenewals();
        try (LockProvider provider = EngineLockProvider.open("test:hanging-renewals?lease=600ms", backend)) {
            long start = System.nanoTime();
            LockHandle handle = provider.lock("stalled").tryAcquire().orElseThrow();
            LockLostException lost = handle.lost().get(30, TimeUnit.SECONDS);
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertTrue(ms >= 500, "lost long before its lease ran out: " + ms + " ms"); // one timer tick (50 ms) early at most
            assertTrue(lost.getMessage().contains("lease ran out before a renewal was confirmed"), lost.getMessage());
            assertTrue(!handle.isHeld());
            handle.close();
        }
    }
}
