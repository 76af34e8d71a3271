package dev.kanuki.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Runs several sides (kanuki and the baselines it is compared with) in one JVM, taking turns in
 * short blocks, round after round, so the machine's other load falls on every side alike; each
 * round opens its sides anew (new providers, new connections) and closes them after. The first
 * rounds are warm-up and are dropped (at least {@link #WARM_ROUNDS}, then until kanuki / raw
 * settles, {@link WarmUp}); ratios are taken within each round, then the median.
 */
final class InterleavedRounds {
    /** Warm-up rounds at least, dropped ({@link WarmUp} decides how many more). */
    static final int WARM_ROUNDS = 3;
    /** Operations per block, for operations of a millisecond or so (a server's write). */
    static final int BLOCK = 2;
    /** Blocks of each side per round. */
    static final int BLOCKS = 40;

    private InterleavedRounds() {
    }

    /** @return the measured rounds a benchmark's {@code main} was given, or 10 */
    static int rounds(String[] args) {
        return args.length > 0 ? Integer.parseInt(args[0]) : 10;
    }

    /** One operation of a side (e.g. one acquire + release). */
    interface Op {
        void run() throws Exception;
    }

    /** A side of a round: its name and its operation. */
    record Side(String name, Op op) {
    }

    /** One round's sides, closed when the round ends. */
    interface Round extends AutoCloseable {
        List<Side> sides();

        /** @return a round of these sides whose {@code close} is {@code closer}'s */
        static Round of(List<Side> sides, AutoCloseable closer) {
            return new Round() {
                @Override
                public List<Side> sides() {
                    return sides;
                }

                @Override
                public void close() throws Exception {
                    closer.close();
                }
            };
        }
    }

    /** Opens one round's sides. */
    interface RoundFactory {
        Round open() throws Exception;
    }

    /** The µs per operation of each side, one row per measured round, in the sides' order. */
    record Results(List<String> names, List<double[]> rounds) {
        double median(String side) {
            int col = names.indexOf(side);
            return Rounds.median(rounds.stream().mapToDouble(r -> r[col]).toArray());
        }

        /** @return the median over rounds of {@code a / b} within each round */
        double ratio(String a, String b) {
            int x = names.indexOf(a);
            int y = names.indexOf(b);
            return Rounds.median(rounds.stream().mapToDouble(r -> r[x] / r[y]).toArray());
        }

        /** Prints the medians, then each pair's median ratio with its range over rounds. */
        void print(String title, String... pairs) {
            System.out.printf(Locale.ROOT, "%s, %d rounds, median µs per op:", title, rounds.size());
            for (String name : names) {
                System.out.printf(Locale.ROOT, " %s %.3g", name, median(name));
            }
            System.out.println();
            for (int i = 0; i + 1 < pairs.length; i += 2) {
                int x = names.indexOf(pairs[i]);
                int y = names.indexOf(pairs[i + 1]);
                double[] perRound = rounds.stream().mapToDouble(r -> r[x] / r[y]).toArray();
                Arrays.sort(perRound);
                System.out.printf(Locale.ROOT, "  %s/%s %.2fx (rounds %.2f–%.2f)%n", pairs[i], pairs[i + 1],
                        Rounds.median(perRound), perRound[0], perRound[perRound.length - 1]);
            }
        }
    }

    /**
     * Runs warm-up rounds (at least {@code warm}, until the sides named "kanuki" / "raw" settle,
     * {@link WarmUp}; none if 0), then {@code rounds} rounds; in each, every side runs
     * {@code block} operations in turn, {@code blocks} times.
     */
    static Results run(RoundFactory factory, int warm, int rounds, int block, int blocks) throws Exception {
        List<String> names = null;
        List<double[]> measured = new ArrayList<>();
        WarmUp warmUp = new WarmUp("kanuki/raw", warm);
        while (measured.size() < rounds) {
            try (Round r = factory.open()) {
                List<Side> sides = r.sides();
                names = sides.stream().map(Side::name).toList();
                long[] nanos = new long[sides.size()];
                for (int b = 0; b < blocks; b++) {
                    for (int k = 0; k < sides.size(); k++) {
                        Op op = sides.get(k).op();
                        long start = System.nanoTime();
                        for (int i = 0; i < block; i++) {
                            op.run();
                        }
                        nanos[k] += System.nanoTime() - start;
                    }
                }
                if (warmUp.warming()) {
                    warmUp.offer((double) nanos[names.indexOf("kanuki")] / nanos[names.indexOf("raw")]);
                } else {
                    measured.add(Arrays.stream(nanos).mapToDouble(n -> n / 1e3 / ((double) block * blocks)).toArray());
                }
            }
        }
        return new Results(names, measured);
    }

    /** @return the nearest-rank percentile {@code p} (0–100) of {@code values} (not changed) */
    static double percentile(double[] values, double p) {
        double[] v = values.clone();
        Arrays.sort(v);
        int rank = (int) Math.ceil(p / 100 * v.length);
        return v[Math.max(0, Math.min(v.length - 1, rank - 1))];
    }
}
