package dev.kanuki.engine;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LeaseKind;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.spi.ChangeSubscription;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockRequest;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * A waiter with change notifications pauses for the backend's retry-after hint (a dead holder's
 * remaining lease) instead of the backoff ramp; a waiter without them ignores the hint.
 */
class RetryAfterHintTest {
    private static final Duration HELD_FOR = Duration.ofMillis(1500);

    /** Held by nobody who will release it: free once {@link #HELD_FOR} has passed, as an expiring lease. */
    static final class ExpiringHolder extends FakeBackend {
        final long freeAt = System.nanoTime() + HELD_FOR.toNanos();
        final AtomicInteger attempts = new AtomicInteger();
        final boolean notifies;

        ExpiringHolder(boolean notifies) {
            super(LeaseKind.TTL);
            this.notifies = notifies;
        }

        @Override
        public Optional<Grant> tryAcquire(LockRequest request) {
            attempts.incrementAndGet();
            long left = freeAt - System.nanoTime();
            if (left <= 0) {
                return Optional.of(() -> 1L);
            }
            request.retryAfter(Duration.ofNanos(left));
            return Optional.empty();
        }

        @Override
        public ChangeSubscription watchChanges(LockRequest request, Runnable onChange) {
            return notifies ? () -> { } : null; // nobody releases: no change ever comes
        }
    }

    @Test
    void aWatchedWaiterSleepsUntilTheHolderLeaseRunsOut() {
        ExpiringHolder backend = new ExpiringHolder(true);
        try (LockProvider provider = EngineLockProvider.open("test:expiring", backend);
             LockHandle h = provider.lock("x").acquire(Duration.ofSeconds(30))) {
            // first try, one more after subscribing, then one when the lease has run out (a late
            // timer may need one more): the ramp would make a dozen
            assertTrue(backend.attempts.get() <= 4, backend.attempts.get() + " attempts");
        }
    }

    @Test
    void aWaiterWithoutNotificationsIgnoresTheHint() {
        ExpiringHolder backend = new ExpiringHolder(false);
        try (LockProvider provider = EngineLockProvider.open("test:expiring", backend);
             LockHandle h = provider.lock("x").acquire(Duration.ofSeconds(30))) {
            // it cannot know whether the holder released early: it keeps its backoff ramp
            assertTrue(backend.attempts.get() > 6, backend.attempts.get() + " attempts");
        }
    }
}
