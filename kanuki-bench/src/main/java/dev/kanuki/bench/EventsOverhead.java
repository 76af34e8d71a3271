package dev.kanuki.bench;

import dev.kanuki.LockProvider;
import dev.kanuki.micrometer.LockMetrics;
import dev.kanuki.testkit.RedisServer;
import io.micrometer.core.instrument.observation.DefaultMeterObservationHandler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What lock events cost: uncontended {@code tryAcquire()} + {@code close()} on one provider with
 * no listener ({@code raw}), beside the same with a listener that does nothing ({@code noop}),
 * with {@code kanuki-micrometer}'s {@link LockMetrics} recording its meters on a
 * {@link SimpleMeterRegistry} ({@code kanuki}), and with its meters and its observations of each
 * wait and hold, the observations handled by Micrometer's {@link DefaultMeterObservationHandler}
 * as a Spring Boot application with actuator has them ({@code observed}). On {@code mem:} (the
 * engine alone, where the listener's share is largest) and on {@code redis://} (one
 * {@code redis-server} from the test kit: a round trip or two per operation).
 *
 * <p>Interleaved in one JVM ({@link InterleavedRounds}): every round opens new providers and
 * registries for each side, runs blocks of each side in turn, and the ratio to {@code raw} is
 * taken within the round; the median over rounds is printed with the range and the load average.
 * Targets: {@code noop}/{@code raw} ≤ 1.05× on {@code mem:}; {@code kanuki}/{@code raw} ≤ 1.5× on
 * {@code mem:} and ≤ 1.05× on {@code redis://}.
 *
 * <pre>
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.EventsOverhead [ROUNDS [mem]]
 * </pre>
 */
public final class EventsOverhead {
    /** mem: operations are a fraction of a microsecond: long blocks, so the clock is not what is timed. */
    private static final int MEM_BLOCK = 2_000;
    private static final int MEM_BLOCKS = 25;
    private static final int REDIS_BLOCK = 5;
    private static final int REDIS_BLOCKS = 200;

    private EventsOverhead() {
    }

    /**
     * @param args {@code [ROUNDS [mem]]}: measured rounds after the warm-up (default 10); {@code mem}: not redis
     * @throws Exception when a side fails
     */
    public static void main(String[] args) throws Exception {
        int rounds = InterleavedRounds.rounds(args);
        System.out.printf(Locale.ROOT, "load average at start: %.1f%n", load());
        InterleavedRounds.Results mem = InterleavedRounds.run(() -> round("mem:"), InterleavedRounds.WARM_ROUNDS,
                rounds, MEM_BLOCK, MEM_BLOCKS);
        mem.print("mem:", "noop", "raw", "kanuki", "raw", "observed", "raw");
        System.out.printf(Locale.ROOT, "load average: %.1f%n", load());
        if (args.length > 1 && args[1].equals("mem")) {
            return;
        }
        try (RedisServer server = RedisServer.start()) {
            String uri = server.kanukiUri();
            InterleavedRounds.Results redis = InterleavedRounds.run(() -> round(uri), InterleavedRounds.WARM_ROUNDS,
                    rounds, REDIS_BLOCK, REDIS_BLOCKS);
            redis.print("redis://", "noop", "raw", "kanuki", "raw", "observed", "raw");
        }
        System.out.printf(Locale.ROOT, "load average at end: %.1f%n", load());
    }

    /** One round: a provider per side, each locking its own name, closed when the round ends. */
    private static InterleavedRounds.Round round(String uri) {
        List<AutoCloseable> open = new ArrayList<>();
        List<InterleavedRounds.Side> sides = new ArrayList<>();
        sides.add(side("raw", uri, open));
        LockProvider noop = provider(uri, open);
        noop.addListener(event -> {
        });
        sides.add(side("noop", noop));
        LockProvider metered = provider(uri, open);
        LockMetrics.builder(new SimpleMeterRegistry()).build().bindTo(metered);
        sides.add(side("kanuki", metered));
        LockProvider observed = provider(uri, open);
        SimpleMeterRegistry meters = new SimpleMeterRegistry();
        ObservationRegistry observations = ObservationRegistry.create();
        observations.observationConfig().observationHandler(new DefaultMeterObservationHandler(meters));
        LockMetrics.builder(meters).observationRegistry(observations).build().bindTo(observed);
        sides.add(side("observed", observed));
        return InterleavedRounds.Round.of(sides, () -> {
            for (AutoCloseable c : open) {
                c.close();
            }
        });
    }

    private static LockProvider provider(String uri, List<AutoCloseable> open) {
        LockProvider provider = LockProvider.open(uri);
        open.add(provider);
        return provider;
    }

    private static InterleavedRounds.Side side(String name, String uri, List<AutoCloseable> open) {
        return side(name, provider(uri, open));
    }

    private static InterleavedRounds.Side side(String name, LockProvider provider) {
        var lock = provider.lock("events-overhead-" + name);
        return new InterleavedRounds.Side(name, () -> lock.tryAcquire().orElseThrow().close());
    }

    private static double load() {
        return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    }
}
