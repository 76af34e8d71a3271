package dev.kanuki.micrometer;

import dev.kanuki.LockEvent;
import dev.kanuki.LockListener;
import dev.kanuki.LockProvider;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.LongTaskTimer;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * kanuki's lock events as Micrometer meters and observations: a {@link LockListener} to register
 * on each provider ({@link #bindTo(LockProvider)}).
 *
 * <p>Meters (on the {@link MeterRegistry}, when one is given), tagged {@code scheme} (the
 * backend's URI scheme) and {@code mode} ({@code exclusive}, {@code shared}, {@code permit}):
 * <ul>
 * <li>{@value #ACQUIRE} (timer): how long each acquisition waited, with the tag {@code outcome}:
 *     {@code acquired}, {@code refused} (a busy {@code tryAcquire()}), {@code timed_out},
 *     {@code failed};</li>
 * <li>{@value #HELD} (long task timer): the locks held now and for how long;</li>
 * <li>{@value #LOST} (counter): locks found lost while held;</li>
 * <li>{@value #WAITERS} (gauge): acquisitions waiting now.</li>
 * </ul>
 *
 * <p>Observations (on the {@link ObservationRegistry}, when one is given): {@value #WAIT_OBSERVATION}
 * for each wait, from the call to its outcome, started on the calling thread (so it is a child of
 * the caller's current observation: a tracing bridge shows the wait as a span of the request), with
 * the low-cardinality keys {@code kanuki.lock.scheme}, {@code kanuki.lock.mode} and
 * {@code kanuki.lock.outcome}, and the error of a timeout or failure; and {@value #HOLD_OBSERVATION}
 * for each hold, from the grant to the release, a child of the same parent, with an event
 * {@code lost} and the {@link dev.kanuki.LockLostException} as its error when the lock was lost.
 * Both carry the lock's name as the high-cardinality key {@code kanuki.lock.name}, which tracing
 * records and meters do not.
 *
 * <p>Lock names are not meter tags (each name would make its own time series), unless
 * {@link Builder#lockNamesAsTags(boolean)} asks for it: then every meter and observation also
 * carries the tag {@code name} (low cardinality), for applications with a few fixed lock names.
 *
 * <p>Thread-safe; one instance may be bound to several providers.
 */
public final class LockMetrics implements LockListener {
    /** The acquire latency timer's name. */
    public static final String ACQUIRE = "kanuki.lock.acquire";
    /** The held-time long task timer's name. */
    public static final String HELD = "kanuki.lock.held";
    /** The lost-lock counter's name. */
    public static final String LOST = "kanuki.lock.lost";
    /** The waiters gauge's name. */
    public static final String WAITERS = "kanuki.lock.waiters";
    /** The name of the observation of each wait. */
    public static final String WAIT_OBSERVATION = "kanuki.lock.wait";
    /** The name of the observation of each hold. */
    public static final String HOLD_OBSERVATION = "kanuki.lock.hold";

    private final MeterRegistry meters;
    private final ObservationRegistry observations;
    private final boolean namesAsTags;
    /** Acquisitions in progress (waiting or holding), by {@link LockEvent#acquisition()}. */
    private final Map<Long, Acquisition> live = new ConcurrentHashMap<>();
    /** Meters by their tags, so that an event does not look them up in the registry. */
    private final Map<MeterKey, Timer> acquireTimers = new ConcurrentHashMap<>();
    private final Map<MeterKey, LongTaskTimer> heldTimers = new ConcurrentHashMap<>();
    private final Map<MeterKey, Counter> lostCounters = new ConcurrentHashMap<>();
    private final Map<MeterKey, AtomicLong> waiters = new ConcurrentHashMap<>();

    private LockMetrics(Builder builder) {
        this.meters = builder.meters;
        this.observations = builder.observations == null || builder.observations.isNoop() ? null : builder.observations;
        this.namesAsTags = builder.namesAsTags;
    }

    /**
     * {@return a builder of meters on a registry}
     *
     * @param meters where the meters go
     */
    public static Builder builder(MeterRegistry meters) {
        return new Builder().meterRegistry(Objects.requireNonNull(meters, "meters"));
    }

    /** {@return a builder with neither meters nor observations yet} */
    public static Builder builder() {
        return new Builder();
    }

    /** Sets up a {@link LockMetrics}. */
    public static final class Builder {
        private MeterRegistry meters;
        private ObservationRegistry observations;
        private boolean namesAsTags;

        private Builder() {
        }

        /**
         * Records the meters on this registry.
         *
         * @param registry the registry, or null for no meters
         * @return this builder
         */
        public Builder meterRegistry(MeterRegistry registry) {
            this.meters = registry;
            return this;
        }

        /**
         * Makes an observation of each wait and each hold on this registry.
         *
         * @param registry the registry, or null (or a no-op one) for no observations
         * @return this builder
         */
        public Builder observationRegistry(ObservationRegistry registry) {
            this.observations = registry;
            return this;
        }

        /**
         * Adds the lock's name as the tag {@code name} to every meter and observation: one time
         * series per name. Only for applications with a few fixed lock names. Default false.
         *
         * @param namesAsTags whether to
         * @return this builder
         */
        public Builder lockNamesAsTags(boolean namesAsTags) {
            this.namesAsTags = namesAsTags;
            return this;
        }

        /** {@return the listener; register it with {@link LockMetrics#bindTo(LockProvider)}} */
        public LockMetrics build() {
            return new LockMetrics(this);
        }
    }

    /**
     * Registers this listener on a provider: acquisitions started from now on are recorded.
     *
     * @param provider the provider
     * @return this
     */
    public LockMetrics bindTo(LockProvider provider) {
        provider.addListener(this);
        return this;
    }

    /**
     * Unregisters this listener from a provider (acquisitions already started are still recorded to their end).
     *
     * @param provider the provider
     */
    public void unbindFrom(LockProvider provider) {
        provider.removeListener(this);
    }

    @Override
    public void onEvent(LockEvent event) {
        switch (event.kind()) {
            case WAITING -> waiting(event);
            case ACQUIRED -> acquired(event);
            case REFUSED, TIMED_OUT, FAILED -> waitEnded(event);
            case LOST -> lost(event);
            case RELEASED -> released(event);
            default -> {
                // a kind added later: nothing to record yet
            }
        }
    }

    private void waiting(LockEvent event) {
        Acquisition a = new Acquisition(key(event));
        if (meters != null) {
            a.waiters = waiters.computeIfAbsent(a.key, this::waitersGauge);
            a.waiters.incrementAndGet();
        }
        if (observations != null) {
            a.parent = observations.getCurrentObservation();
            a.wait = observation(WAIT_OBSERVATION, event, a.parent).start();
        }
        live.put(event.acquisition(), a);
    }

    private void acquired(LockEvent event) {
        Acquisition a = live.get(event.acquisition());
        if (a == null) {
            return; // started before this listener was bound
        }
        endWait(a, event, "acquired");
        if (meters != null) {
            a.held = heldTimers.computeIfAbsent(a.key, k -> LongTaskTimer.builder(HELD)
                    .description("locks held now, and for how long").tags(tags(k)).register(meters)).start();
        }
        if (observations != null) {
            a.hold = observation(HOLD_OBSERVATION, event, a.parent).start();
        }
    }

    private void waitEnded(LockEvent event) {
        Acquisition a = live.remove(event.acquisition());
        if (a == null) {
            return;
        }
        String outcome = event.kind().name().toLowerCase(Locale.ROOT);
        if (a.wait != null) {
            event.error().ifPresent(a.wait::error);
        }
        endWait(a, event, outcome);
    }

    private void endWait(Acquisition a, LockEvent event, String outcome) {
        if (meters != null) {
            a.waiters.decrementAndGet();
            MeterKey timerKey = a.key.withOutcome(outcome);
            acquireTimers.computeIfAbsent(timerKey, k -> Timer.builder(ACQUIRE)
                    .description("how long acquisitions waited, by outcome").tags(tags(k)).tag("outcome", outcome)
                    .register(meters)).record(event.waited());
        }
        if (a.wait != null) {
            a.wait.lowCardinalityKeyValue("kanuki.lock.outcome", outcome);
            a.wait.stop();
            a.wait = null;
        }
    }

    private void lost(LockEvent event) {
        Acquisition a = live.get(event.acquisition());
        if (a == null) {
            return;
        }
        if (meters != null) {
            lostCounters.computeIfAbsent(a.key, k -> Counter.builder(LOST)
                    .description("locks found lost while held").tags(tags(k)).register(meters)).increment();
        }
        if (a.hold != null) {
            a.hold.event(Observation.Event.of("lost", "the lock was lost while held"));
            event.error().ifPresent(a.hold::error);
        }
    }

    private void released(LockEvent event) {
        Acquisition a = live.remove(event.acquisition());
        if (a == null) {
            return;
        }
        if (a.held != null) {
            a.held.stop();
        }
        if (a.hold != null) {
            a.hold.stop();
        }
    }

    private Observation observation(String name, LockEvent event, Observation parent) {
        Observation o = Observation.createNotStarted(name, observations)
                .lowCardinalityKeyValue("kanuki.lock.scheme", event.scheme())
                .lowCardinalityKeyValue("kanuki.lock.mode", mode(event))
                .highCardinalityKeyValue("kanuki.lock.name", event.name())
                .contextualName(name.equals(WAIT_OBSERVATION) ? "lock wait" : "lock hold");
        if (namesAsTags) {
            o.lowCardinalityKeyValue("name", event.name());
        }
        if (parent != null) {
            o.parentObservation(parent);
        }
        return o;
    }

    private AtomicLong waitersGauge(MeterKey key) {
        AtomicLong count = new AtomicLong();
        Gauge.builder(WAITERS, count, AtomicLong::get).description("acquisitions waiting now")
                .tags(tags(key)).strongReference(true).register(meters);
        return count;
    }

    private MeterKey key(LockEvent event) {
        return new MeterKey(event.scheme(), mode(event), namesAsTags ? event.name() : null, null);
    }

    private static String mode(LockEvent event) {
        return event.mode().name().toLowerCase(Locale.ROOT);
    }

    private static Tags tags(MeterKey key) {
        Tags tags = Tags.of("scheme", key.scheme, "mode", key.mode);
        return key.name == null ? tags : tags.and("name", key.name);
    }

    /** The tags of a meter. */
    private record MeterKey(String scheme, String mode, String name, String outcome) {
        MeterKey withOutcome(String outcome) {
            return new MeterKey(scheme, mode, name, outcome);
        }
    }

    /** What this listener keeps of one acquisition between its events. */
    private static final class Acquisition {
        final MeterKey key;
        // Volatile: an acquisition's events come from different threads (the caller, the thread
        // that hands over the lock, the lease watchdog, the one that closes the handle).
        volatile AtomicLong waiters;
        volatile Observation parent;
        volatile Observation wait;
        volatile Observation hold;
        volatile LongTaskTimer.Sample held;

        Acquisition(MeterKey key) {
            this.key = key;
        }
    }
}
