package dev.kanuki.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LeaseKind;
import dev.kanuki.LockProvider;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The engine hands the caller's deadline to the backend, so that a backend can bound each call by it. */
class RequestDeadlineTest {

    /** Refuses every attempt and records the time left that each one was given. */
    static final class AlwaysBusy extends FakeBackend {
        final List<Duration> timeLeft = new CopyOnWriteArrayList<>();
        final List<Duration> callTimeouts = new CopyOnWriteArrayList<>();

        AlwaysBusy() {
            super(LeaseKind.SESSION);
        }

        @Override
        public Optional<Grant> tryAcquire(LockRequest request) {
            timeLeft.add(request.timeLeft());
            callTimeouts.add(request.callTimeout(Duration.ofSeconds(5)));
            return Optional.empty();
        }
    }

    @Test
    void eachAttemptKnowsTheTimeLeftBeforeTheCallersDeadline() {
        AlwaysBusy backend = new AlwaysBusy();
        try (LockProvider provider = EngineLockProvider.open("test:always-busy", backend)) {
            assertTrue(provider.lock("x").tryAcquire().isEmpty());
            assertEquals(Duration.ZERO, backend.timeLeft.get(0), "a try without waiting has no time left");
            assertEquals(Duration.ofSeconds(1), backend.callTimeouts.get(0), "but its one call gets a second");

            backend.timeLeft.clear();
            backend.callTimeouts.clear();
            assertTrue(provider.lock("x").tryAcquire(Duration.ofSeconds(3)).isEmpty());
            Duration first = backend.timeLeft.get(0);
            assertTrue(first.compareTo(Duration.ofSeconds(3)) <= 0 && first.compareTo(Duration.ofSeconds(2)) > 0,
                    "the first attempt of a 3 s wait had " + first + " left");
            assertTrue(backend.callTimeouts.get(0).compareTo(Duration.ofSeconds(3)) <= 0,
                    "a call is cut to the caller's deadline, not the backend's 5 s");
            Duration last = backend.timeLeft.get(backend.timeLeft.size() - 1);
            assertTrue(last.compareTo(first) < 0, "the time left shrinks from attempt to attempt");
        }
    }

    @Test
    void aRequestWithoutDeadlineHasAllTheTimeInTheWorld() {
        LockRequest request = new LockRequest("x", LockMode.EXCLUSIVE, 1, Duration.ofSeconds(30));
        assertEquals(Duration.ofNanos(Long.MAX_VALUE), request.timeLeft());
        assertEquals(Duration.ofSeconds(5), request.callTimeout(Duration.ofSeconds(5)));
        assertEquals(Duration.ofMillis(200), request.callTimeout(Duration.ofMillis(200)));
    }
}
