package dev.kanuki.micrometer;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.LockLostException;
import dev.kanuki.LockProvider;
import dev.kanuki.LockTimeoutException;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.tck.TestObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link LockMetrics} on {@code mem:} with a {@link SimpleMeterRegistry} and a
 * {@link TestObservationRegistry}: the meters count each outcome once with scheme and mode tags
 * (no lock names unless asked), the held-time and waiter meters go up and back down, and each
 * wait and hold is one observation, a child of the caller's.
 */
class LockMetricsTest {
    private static final Duration LONG = Duration.ofSeconds(30);

    private final SimpleMeterRegistry meters = new SimpleMeterRegistry();
    private final TestObservationRegistry observations = TestObservationRegistry.create();
    /** Every observation context started, to check parents. */
    private final List<Observation.Context> started = new CopyOnWriteArrayList<>();
    private LockProvider provider;

    @BeforeEach
    void open() {
        observations.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public void onStart(Observation.Context context) {
                started.add(context);
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }
        });
        provider = LockProvider.open("mem:" + UUID.randomUUID());
        LockMetrics.builder(meters).observationRegistry(observations).build().bindTo(provider);
    }

    @AfterEach
    void close() {
        provider.close();
    }

    @Test
    void outcomesAreTimedWithSchemeModeAndOutcomeButNoName() {
        DistributedLock lock = provider.lock("report");
        try (LockHandle h = lock.acquire(LONG)) {
            LongTaskTimer held = meters.get(LockMetrics.HELD).tags("scheme", "mem", "mode", "exclusive").longTaskTimer();
            assertEquals(1, held.activeTasks());
            assertTrue(lock.tryAcquire().isEmpty());
            assertThrows(LockTimeoutException.class, () -> lock.acquire(Duration.ofMillis(100)));
        }
        assertEquals(0, meters.get(LockMetrics.HELD).longTaskTimer().activeTasks());
        for (String outcome : List.of("acquired", "refused", "timed_out")) {
            Timer timer = meters.get(LockMetrics.ACQUIRE)
                    .tags("scheme", "mem", "mode", "exclusive", "outcome", outcome).timer();
            assertEquals(1, timer.count(), outcome);
        }
        assertTrue(meters.get(LockMetrics.ACQUIRE).tags("outcome", "timed_out").timer()
                .totalTime(TimeUnit.MILLISECONDS) >= 100, "a timed-out wait lasted its timeout");
        assertEquals(0, meters.get(LockMetrics.WAITERS).gauge().value());
        assertTrue(meters.getMeters().stream().allMatch(m -> m.getId().getTag("name") == null),
                "no lock name as a tag by default");
    }

    @Test
    void aQueuedWaiterCountsAsAWaiterUntilServed() throws Exception {
        DistributedLock lock = provider.lock("line");
        LockHandle first = lock.acquire(LONG);
        CompletableFuture<LockHandle> second = lock.acquireAsync(LONG);
        assertEquals(1, meters.get(LockMetrics.WAITERS).tags("scheme", "mem", "mode", "exclusive").gauge().value());
        first.close();
        second.get(30, TimeUnit.SECONDS).close();
        assertEquals(0, meters.get(LockMetrics.WAITERS).gauge().value());
        assertEquals(2, meters.get(LockMetrics.ACQUIRE).tags("outcome", "acquired").timer().count());
        assertEquals(0, meters.get(LockMetrics.HELD).longTaskTimer().activeTasks());
    }

    @Test
    void aLostLockIsCountedAndEndsItsHoldWithTheError() throws Exception {
        LockHandle h = provider.lock("limited").withMaxHold(Duration.ofMillis(200)).acquire(LONG);
        h.lost().get(30, TimeUnit.SECONDS);
        await(() -> meters.find(LockMetrics.LOST).counter() != null
                && meters.get(LockMetrics.HELD).longTaskTimer().activeTasks() == 0);
        assertEquals(1, meters.get(LockMetrics.LOST).tags("scheme", "mem", "mode", "exclusive").counter().count());
        await(() -> started.stream().filter(c -> c.getName().equals(LockMetrics.HOLD_OBSERVATION))
                .anyMatch(c -> c.getError() != null));
        assertThat(observations).hasObservationWithNameEqualTo(LockMetrics.HOLD_OBSERVATION).that()
                .hasBeenStarted().hasBeenStopped().hasError();
        Observation.Context hold = started.stream().filter(c -> c.getName().equals(LockMetrics.HOLD_OBSERVATION))
                .findFirst().orElseThrow();
        assertInstanceOf(LockLostException.class, hold.getError());
    }

    @Test
    void eachWaitAndHoldIsAnObservationUnderTheCallers() {
        Observation request = Observation.start("request", observations);
        try (Observation.Scope scope = request.openScope()) {
            provider.lock("traced").acquire(LONG).close();
        }
        request.stop();
        assertThat(observations).hasNumberOfObservationsWithNameEqualTo(LockMetrics.WAIT_OBSERVATION, 1)
                .hasNumberOfObservationsWithNameEqualTo(LockMetrics.HOLD_OBSERVATION, 1);
        assertThat(observations).hasObservationWithNameEqualTo(LockMetrics.WAIT_OBSERVATION).that()
                .hasBeenStarted().hasBeenStopped()
                .hasLowCardinalityKeyValue("kanuki.lock.scheme", "mem")
                .hasLowCardinalityKeyValue("kanuki.lock.mode", "exclusive")
                .hasLowCardinalityKeyValue("kanuki.lock.outcome", "acquired")
                .hasHighCardinalityKeyValue("kanuki.lock.name", "traced")
                .doesNotHaveError();
        assertThat(observations).hasObservationWithNameEqualTo(LockMetrics.HOLD_OBSERVATION).that()
                .hasBeenStarted().hasBeenStopped().hasHighCardinalityKeyValue("kanuki.lock.name", "traced");
        for (Observation.Context c : started) {
            if (!c.getName().equals("request")) {
                assertSame(request, c.getParentObservation(), c.getName() + " is a child of the caller's observation");
            }
        }
    }

    @Test
    void lockNamesAreTagsOnlyWhenAsked() {
        SimpleMeterRegistry named = new SimpleMeterRegistry();
        LockMetrics metrics = LockMetrics.builder(named).lockNamesAsTags(true).build().bindTo(provider);
        provider.lock("nightly").acquire(LONG).close();
        assertEquals(1, named.get(LockMetrics.ACQUIRE).tags("name", "nightly", "outcome", "acquired").timer().count());
        metrics.unbindFrom(provider);
        provider.lock("nightly").acquire(LONG).close();
        assertEquals(1, named.get(LockMetrics.ACQUIRE).tags("name", "nightly").timer().count(), "unbound: not recorded");
        assertNull(meters.find(LockMetrics.ACQUIRE).tags("name", "nightly").timer(), "the default listener has no names");
    }

    private static void await(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not reached within 30 s");
            }
            Thread.sleep(10);
        }
    }
}
