package dev.kanuki.bench;

import dev.kanuki.testkit.ZooKeeperServer;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Handoff between two JVMs on ZooKeeper, three sides taking turns in one run: {@link HandoffBench}'s
 * ring of three locks between this JVM and a {@link HandoffPartner} JVM per side, all three pairs
 * open at once on one server started by the test kit. Each round steps every pair for a block of
 * {@value #STEPS} round trips, {@value #BLOCKS} times in turn; a handoff is a round trip / 2 (the
 * time from one party's release to the other's acquire). Per round, each side's p50; the medians
 * over rounds of p50 and of the per-round p50 ratios, and p99 over all samples, are printed.
 *
 * <ul>
 *   <li>{@code kanuki}: {@code zookeeper://}, {@code acquire(30s)} and {@code close()}, each JVM with
 *       its own provider;
 *   <li>{@code curator}: Curator's {@code InterProcessMutex}, one client per JVM;
 *   <li>{@code raw}: the plain ZooKeeper handle: create the ephemeral node; when it exists, watch it
 *       with {@code exists} and create again when the watch fires ({@link ZooKeeperByHand#createWaiting}).
 * </ul>
 *
 * Target: kanuki's p50 ≤ 0.6× Curator's.
 *
 * <pre>
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.ZooKeeperHandoff [ROUNDS]
 * </pre>
 */
public final class ZooKeeperHandoff {
    private static final int STEPS = 4;
    private static final int BLOCKS = 15;
    private static final int WARM_ROUNDS = 2;

    private ZooKeeperHandoff() {
    }

    /** The party of a partner kind {@code zkRaw:CONNECT} or {@code zkCurator:CONNECT}. */
    static HandoffParty party(String kind) throws IOException {
        try {
            if (kind.startsWith(ZooKeeperByHand.RAW_PREFIX)) {
                return new ZooKeeperByHand.RawParty(kind.substring(ZooKeeperByHand.RAW_PREFIX.length()));
            }
            return new ZooKeeperByHand.CuratorParty(kind.substring(ZooKeeperByHand.CURATOR_PREFIX.length()));
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException("cannot open a " + kind + " party: " + e, e);
        }
    }

    /**
     * @param args the number of measured rounds (default 10)
     * @throws Exception when ZooKeeper is missing or a party fails
     */
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        try (ZooKeeperServer server = ZooKeeperServer.start()) {
            print(run(server, rounds, STEPS, BLOCKS));
        }
    }

    /**
     * Runs the rounds: each side steps its ring {@code steps} times in turn, {@code blocks} times a round.
     *
     * @return per side, per measured round, the handoff times in µs
     */
    static Map<String, List<double[]>> run(ZooKeeperServer server, int rounds, int steps, int blocks)
            throws Exception {
        Map<String, String> kinds = new LinkedHashMap<>();
        kinds.put("kanuki", HandoffParty.KANUKI_URI_PREFIX + server.kanukiUri());
        kinds.put("curator", ZooKeeperByHand.CURATOR_PREFIX + server.connectString());
        kinds.put("raw", ZooKeeperByHand.RAW_PREFIX + server.connectString());
        Map<String, HandoffPair> pairs = new LinkedHashMap<>();
        Map<String, List<double[]>> samples = new LinkedHashMap<>();
        try {
            for (Map.Entry<String, String> kind : kinds.entrySet()) {
                pairs.put(kind.getKey(), HandoffPair.open(HandoffPair.PROCESSES_PREFIX + kind.getValue()));
                samples.put(kind.getKey(), new ArrayList<>());
            }
            WarmUp warmUp = new WarmUp("zookeeper handoff median kanuki/raw", WARM_ROUNDS);
            while (samples.get("kanuki").size() < rounds) {
                Map<String, double[]> thisRound = new LinkedHashMap<>();
                pairs.keySet().forEach(side -> thisRound.put(side, new double[steps * blocks]));
                for (int b = 0; b < blocks; b++) {
                    for (Map.Entry<String, HandoffPair> pair : pairs.entrySet()) {
                        double[] out = thisRound.get(pair.getKey());
                        for (int i = 0; i < steps; i++) {
                            long start = System.nanoTime();
                            pair.getValue().step();
                            out[b * steps + i] = (System.nanoTime() - start) / 2e3; // one round trip, two handoffs
                        }
                        pair.getValue().checkPartner();
                    }
                }
                if (warmUp.warming()) {
                    warmUp.offer(Rounds.median(thisRound.get("kanuki")) / Rounds.median(thisRound.get("raw")));
                } else {
                    thisRound.forEach((side, s) -> samples.get(side).add(s));
                }
            }
        } finally {
            for (HandoffPair pair : pairs.values()) {
                pair.close();
            }
        }
        return samples;
    }

    static void print(Map<String, List<double[]>> samples) {
        Map<String, double[]> p50s = new LinkedHashMap<>();
        System.out.printf(Locale.ROOT, "zookeeper handoff between 2 JVMs, %d rounds, µs per handoff:%n",
                samples.values().iterator().next().size());
        for (Map.Entry<String, List<double[]>> side : samples.entrySet()) {
            double[] p50 = side.getValue().stream().mapToDouble(s -> Rounds.median(s)).toArray();
            double[] all = side.getValue().stream().flatMapToDouble(java.util.Arrays::stream).toArray();
            p50s.put(side.getKey(), p50);
            System.out.printf(Locale.ROOT, "  %-8s p50 %.0f (median of rounds), p90 %.0f, p99 %.0f (all %d handoffs)%n",
                    side.getKey(), Rounds.median(p50), InterleavedRounds.percentile(all, 90),
                    InterleavedRounds.percentile(all, 99), all.length);
        }
        for (String base : List.of("curator", "raw")) {
            double[] k = p50s.get("kanuki");
            double[] b = p50s.get(base);
            double[] ratios = new double[k.length];
            for (int i = 0; i < k.length; i++) {
                ratios[i] = k[i] / b[i];
            }
            System.out.printf(Locale.ROOT, "  p50 kanuki/%s %.2fx (median of per-round ratios)%n", base,
                    Rounds.median(ratios));
        }
    }
}
