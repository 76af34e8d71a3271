package dev.kanuki.micrometer;

import dev.kanuki.LockEvent;
import dev.kanuki.LockListener;
import dev.kanuki.LockProvider;
import dev.kanuki.spi.LockMode;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReferenceArray;

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

    /** The outcomes of a wait, in the order of {@link MeterSet#acquire}. */
    private static final String[] OUTCOMES = {"acquired", "refused", "timed_out", "failed"};

    private final MeterRegistry meters;
    private final ObservationRegistry observations;
    private final boolean namesAsTags;
    /** The meters of each scheme, mode (and name, when names are tags), made on first use. */
    private final Map<MeterKey, MeterSet> meterSets = new ConcurrentHashMap<>();
    /** The meters the last acquisition used: most use the same, and then need no lookup. */
    private volatile MeterSet lastMeterSet;

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

    /**
     * Records nothing: this listener is told each acquisition's events through the listener
     * {@link #onWaiting} returns for it. An event passed here directly is ignored.
     *
     * @param event an event
     */
    @Override
    public void onEvent(LockEvent event) {
        // Each acquisition's events go to its own Acquisition (onWaiting): nothing to look up here.
    }

    /**
     * Starts recording an acquisition: counts it as a waiter and starts its wait observation.
     *
     * @param waiting its {@code WAITING} event
     * @return the listener of its other events, which holds what it records
     */
    @Override
    public LockListener onWaiting(LockEvent waiting) {
        Acquisition a = new Acquisition(meters == null ? null : meterSet(waiting));
        if (a.meterSet != null) {
            a.meterSet.waiters.incrementAndGet();
        }
        if (observations != null) {
            a.parent = observations.getCurrentObservation();
            a.wait = observation(WAIT_OBSERVATION, waiting, a.parent).start();
        }
        return a;
    }

    private MeterSet meterSet(LockEvent event) {
        MeterSet last = lastMeterSet;
        if (last != null && last.isFor(event)) {
            return last;
        }
        MeterKey key = new MeterKey(event.scheme(), event.mode(), namesAsTags ? event.name() : null);
        MeterSet set = meterSets.computeIfAbsent(key, MeterSet::new);
        lastMeterSet = set;
        return set;
    }

    private Observation observation(String name, LockEvent event, Observation parent) {
        Observation o = Observation.createNotStarted(name, observations)
                .lowCardinalityKeyValue("kanuki.lock.scheme", event.scheme())
                .lowCardinalityKeyValue("kanuki.lock.mode", mode(event.mode()))
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

    private static String mode(LockMode mode) {
        return mode.name().toLowerCase(Locale.ROOT);
    }

    /** The tags of a set of meters: name is null unless names are tags. */
    private record MeterKey(String scheme, LockMode mode, String name) {
        Tags tags() {
            Tags tags = Tags.of("scheme", scheme, "mode", LockMetrics.mode(mode));
            return name == null ? tags : tags.and("name", name);
        }
    }

    /** The meters of one scheme and mode (and name): found once per acquisition. */
    private final class MeterSet {
        final MeterKey key;
        final Tags tags;
        final AtomicLong waiters = new AtomicLong();
        final LongTaskTimer held;
        /** By the index of the outcome in {@link #OUTCOMES}; registered on first use. */
        final AtomicReferenceArray<Timer> acquire = new AtomicReferenceArray<>(OUTCOMES.length);
        volatile Counter lost;

        MeterSet(MeterKey key) {
            this.key = key;
            this.tags = key.tags();
            Gauge.builder(WAITERS, waiters, AtomicLong::get).description("acquisitions waiting now")
                    .tags(tags).strongReference(true).register(meters);
            this.held = LongTaskTimer.builder(HELD).description("locks held now, and for how long").tags(tags)
                    .register(meters);
        }

        boolean isFor(LockEvent event) {
            return key.mode == event.mode() && key.scheme.equals(event.scheme())
                    && (key.name == null || key.name.equals(event.name()));
        }

        Timer acquireTimer(int outcome) {
            Timer timer = acquire.get(outcome);
            if (timer == null) {
                // A race registers it twice: the registry returns the same meter both times.
                timer = Timer.builder(ACQUIRE).description("how long acquisitions waited, by outcome").tags(tags)
                        .tag("outcome", OUTCOMES[outcome]).register(meters);
                acquire.set(outcome, timer);
            }
            return timer;
        }

        Counter lostCounter() {
            Counter counter = lost;
            if (counter == null) {
                counter = Counter.builder(LOST).description("locks found lost while held").tags(tags).register(meters);
                lost = counter;
            }
            return counter;
        }
    }

    /**
     * What is recorded of one acquisition: the listener of its events after {@code WAITING}. Plain
     * fields: the engine delivers an acquisition's events one at a time, each after the one
     * before it (LockListener), also when they come on different threads.
     */
    private final class Acquisition implements LockListener {
        final MeterSet meterSet;
        Observation parent;
        Observation wait;
        Observation hold;
        LongTaskTimer.Sample held;

        Acquisition(MeterSet meterSet) {
            this.meterSet = meterSet;
        }

        @Override
        public void onEvent(LockEvent event) {
            switch (event.kind()) {
                case ACQUIRED -> acquired(event);
                case REFUSED -> waitEnded(event, 1);
                case TIMED_OUT -> waitEnded(event, 2);
                case FAILED -> waitEnded(event, 3);
                case LOST -> lost(event);
                case RELEASED -> released();
                default -> {
                    // WAITING went to onWaiting; a kind added later: nothing to record yet
                }
            }
        }

        private void acquired(LockEvent event) {
            endWait(event, 0);
            if (meterSet != null) {
                held = meterSet.held.start();
            }
            if (observations != null) {
                hold = observation(HOLD_OBSERVATION, event, parent).start();
            }
        }

        private void waitEnded(LockEvent event, int outcome) {
            if (wait != null) {
                event.error().ifPresent(wait::error);
            }
            endWait(event, outcome);
        }

        private void endWait(LockEvent event, int outcome) {
            if (meterSet != null) {
                meterSet.waiters.decrementAndGet();
                meterSet.acquireTimer(outcome).record(event.waitedNanos(), TimeUnit.NANOSECONDS);
            }
            if (wait != null) {
                wait.lowCardinalityKeyValue("kanuki.lock.outcome", OUTCOMES[outcome]);
                wait.stop();
                wait = null;
            }
        }

        private void lost(LockEvent event) {
            if (meterSet != null) {
                meterSet.lostCounter().increment();
            }
            if (hold != null) {
                hold.event(Observation.Event.of("lost", "the lock was lost while held"));
                event.error().ifPresent(hold::error);
            }
        }

        private void released() {
            if (held != null) {
                held.stop();
                held = null;
            }
            if (hold != null) {
                hold.stop();
                hold = null;
            }
        }
    }
}
