package dev.kanuki.bench;

import dev.kanuki.testkit.RedisServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Redis handoff between two JVMs: the time from a release in one JVM to the acquisition by the
 * waiter in the other. {@link HandoffBench}'s ring of three locks ({@link HandoffRing}) between
 * this JVM and a {@link HandoffPartner} JVM per implementation, all three pairs open at once on
 * one {@code redis-server} started by the test kit:
 *
 * <ul>
 *   <li>{@code kanuki}: {@code redis://}, {@code acquire(30s)} + {@code close()} (a waiter is
 *       woken by the {@code PUBLISH} of the release script, through the provider's pub/sub
 *       connection);</li>
 *   <li>{@code raw}: Lettuce by hand ({@link RedisParties.PubSubParty}): {@code SUBSCRIBE},
 *       {@code SET NX PX} fails, wait for the {@code PUBLISH} of the releaser's compare-and-delete
 *       script, {@code SET NX PX} again;</li>
 *   <li>{@code redisson}: Redisson 4.7.0 {@code RLock.lock(lease)} + {@code unlock()}.</li>
 * </ul>
 *
 * <p>The raw and Redisson locks get a 10-minute lease ({@link RedisParties#LEASE_MILLIS}): a main
 * party holds its lock while the other pairs run, and neither renews a lease.
 *
 * <p>Interleaved: each round runs {@value #BLOCKS} blocks, each of {@value #STEPS} ring steps of
 * every implementation in turn, and times every step (one step = two handoffs, so a handoff is
 * a step's time / 2). A round's p50 and p99 per implementation, ratios within the round, then
 * the median over rounds. The first rounds are warm-up and are dropped: at least {@value #WARM_ROUNDS}, then until p50
 * kanuki / raw settles ({@link WarmUp}).
 * Targets: kanuki ≤ 1.5× raw and ≤ 0.5× Redisson.
 *
 * <pre>
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.RedisHandoffBench [ROUNDS]
 * </pre>
 */
public final class RedisHandoffBench {
    private static final int STEPS = 10;
    private static final int BLOCKS = 20;
    /**
     * Warm-up rounds, dropped: all three get faster over the first rounds as the JIT compiles
     * their paths, Redisson's over more rounds than the others (its p50 fell 4-fold over 10
     * rounds here, kanuki's and the raw client's 3-fold over 5), so a short warm-up flatters
     * kanuki against Redisson.
     */
    private static final int WARM_ROUNDS = 10;
    /** Prints every round's p50s ({@code -Dkanuki.bench.verbose=true}). */
    private static final boolean VERBOSE = Boolean.getBoolean("kanuki.bench.verbose");
    /** The implementations, in the order of a round's columns (p50s, then p99s). */
    static final String[] IMPLS = {"kanuki", "raw", "redisson"};

    private RedisHandoffBench() {
    }

    /**
     * @param args {@code [ROUNDS]}, measured rounds after the warm-up (default 10)
     * @throws Exception when a party fails
     */
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        try (RedisServer server = RedisServer.start()) {
            run(server.kanukiUri(), rounds, BLOCKS);
        }
    }

    /**
     * Opens the three pairs, runs the warm-up (at least {@code WARM_ROUNDS} rounds, until p50
     * kanuki / raw settles, {@link WarmUp}) and {@code rounds} rounds, and prints the medians and
     * ratios.
     *
     * @return the measured rounds: µs per handoff, p50 of each implementation, then p99 of each
     */
    static List<double[]> run(String uri, int rounds, int blocks) throws Exception {
        String[] kinds = {HandoffParty.KANUKI_URI_PREFIX + uri, RedisParties.RAW_PREFIX + uri,
            RedisParties.REDISSON_PREFIX + uri};
        // kanuki's pair opens last: its partner gives up after waiting 30 s (HandoffParty.KanukiParty),
        // and on a very busy machine starting the other two partner JVMs can take longer than that
        HandoffPair[] opened = new HandoffPair[kinds.length];
        List<HandoffPair> pairs = new ArrayList<>();
        List<double[]> results = new ArrayList<>();
        try {
            for (int k = kinds.length - 1; k >= 0; k--) {
                opened[k] = HandoffPair.open(HandoffPair.PROCESSES_PREFIX + kinds[k]);
                pairs.add(opened[k]);
            }
            pairs = List.of(opened);
            WarmUp warmUp = new WarmUp("redis handoff p50 kanuki/raw", WARM_ROUNDS);
            for (int round = 0; results.size() < rounds; round++) {
                long[][] nanos = new long[pairs.size()][STEPS * blocks];
                for (int b = 0; b < blocks; b++) {
                    for (int k = 0; k < pairs.size(); k++) {
                        HandoffPair pair = pairs.get(k);
                        for (int i = 0; i < STEPS; i++) {
                            long start = System.nanoTime();
                            pair.step();
                            nanos[k][b * STEPS + i] = (System.nanoTime() - start) / 2;
                        }
                    }
                }
                for (HandoffPair pair : pairs) {
                    pair.checkPartner();
                }
                double[] micros = new double[2 * pairs.size()];
                for (int k = 0; k < pairs.size(); k++) {
                    micros[k] = Rounds.percentile(nanos[k], 50) / 1e3;
                    micros[pairs.size() + k] = Rounds.percentile(nanos[k], 99) / 1e3;
                }
                boolean warming = warmUp.warming();
                if (warming) {
                    warmUp.offer(micros[0] / micros[1]);
                } else {
                    results.add(micros);
                }
                if (VERBOSE) {
                    System.out.printf(Locale.ROOT, "  round %d%s: p50 kanuki %.0f raw %.0f redisson %.0f µs%n", round + 1,
                            warming ? " (warm-up)" : "", micros[0], micros[1], micros[2]);
                }
            }
        } finally {
            closeAll(pairs);
        }
        System.out.printf(Locale.ROOT, "redis handoff between 2 JVMs, %d rounds of %d×%d ring steps per implementation,"
                + " median over rounds, µs per handoff%n", rounds, blocks, STEPS);
        Rounds.printMedians("  p50", IMPLS, results, "%.0f");
        Rounds.printMedians("  p99", IMPLS, Rounds.columns(results, IMPLS.length, 2 * IMPLS.length), "%.0f");
        System.out.println("  median of per-round ratios:");
        Rounds.printRatio("p50 kanuki/raw", results, 0, 1, "≤ 1.5x");
        Rounds.printRatio("p50 kanuki/redisson", results, 0, 2, "≤ 0.5x");
        Rounds.printRatio("p99 kanuki/raw", results, 3, 4, "");
        Rounds.printRatio("p99 kanuki/redisson", results, 3, 5, "");
        return results;
    }

    /** Closes every pair, even when closing one fails; throws the first failure. */
    private static void closeAll(List<HandoffPair> pairs) throws Exception {
        Exception first = null;
        for (HandoffPair pair : pairs) {
            try {
                pair.close();
            } catch (Exception e) {
                if (first == null) {
                    first = e;
                } else {
                    first.addSuppressed(e);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
