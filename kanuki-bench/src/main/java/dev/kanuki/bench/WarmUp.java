package dev.kanuki.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The warm-up rule of every interleaved benchmark: warm-up rounds go on until the headline ratio
 * (kanuki / its baseline, taken within each round) of the last {@value #SETTLED_ROUNDS} rounds
 * lies within {@value #TOLERANCE_PERCENT} % (largest / smallest), and for at least the
 * benchmark's own minimum of rounds. A fixed count of two or three rounds left the first measured
 * rounds of some benchmarks at 1.4–1.6× where they settle at 1.2× (the JIT was still compiling
 * kanuki's longer path). After {@value #MAX_ROUNDS} warm-up rounds it gives up, prints "did not
 * settle" and the benchmark measures anyway, so a figure taken from such a run can be told apart.
 *
 * <p>Use: while {@link #warming()}, run a round, give its ratio to {@link #offer} and drop the
 * round; then measure.
 */
final class WarmUp {
    /** How many consecutive warm-up rounds' ratios must agree. */
    static final int SETTLED_ROUNDS = 3;
    /** How far apart they may be, largest / smallest − 1, in per cent. */
    static final int TOLERANCE_PERCENT = 5;
    /** Warm-up rounds after which the rule gives up. */
    static final int MAX_ROUNDS = 20;

    private final String what;
    private final int minRounds;
    private final List<Double> ratios = new ArrayList<>();
    private boolean done;
    private String verdict = "no warm-up";

    /**
     * @param what the benchmark and its headline ratio, for the printed line
     * @param minRounds warm-up rounds at least; 0 for none at all (the smoke tests)
     */
    WarmUp(String what, int minRounds) {
        this.what = what;
        this.minRounds = minRounds;
        this.done = minRounds == 0;
    }

    /** @return whether the next round is still warm-up */
    boolean warming() {
        return !done;
    }

    /**
     * Records one warm-up round's headline ratio and decides whether warm-up is over (printing
     * one line when it is).
     *
     * @param ratio kanuki / baseline within the round just run
     */
    void offer(double ratio) {
        if (done) {
            throw new IllegalStateException("warm-up is over");
        }
        ratios.add(ratio);
        int n = ratios.size();
        if (n >= Math.max(minRounds, SETTLED_ROUNDS) && settled(ratios.subList(n - SETTLED_ROUNDS, n))) {
            finish(String.format(Locale.ROOT, "settled after %d rounds", n));
        } else if (n >= MAX_ROUNDS) {
            finish(String.format(Locale.ROOT, "did not settle after %d rounds (last %d within %d %% wanted)", n,
                    SETTLED_ROUNDS, TOLERANCE_PERCENT));
        }
    }

    /** @return "settled after N rounds", "did not settle after N rounds …" or "no warm-up", for a summary */
    String verdict() {
        return verdict;
    }

    /** @return whether {@code last} (the last rounds' ratios) lie within the tolerance */
    static boolean settled(List<Double> last) {
        double min = last.stream().mapToDouble(Double::doubleValue).min().orElseThrow();
        double max = last.stream().mapToDouble(Double::doubleValue).max().orElseThrow();
        return max <= min * (1 + TOLERANCE_PERCENT / 100.0);
    }

    private void finish(String how) {
        done = true;
        verdict = how;
        System.out.printf(Locale.ROOT, "warm-up %s: %s; %s per round: %s%n", what, how, "ratio",
                ratios.stream().map(r -> String.format(Locale.ROOT, "%.2f", r)).collect(Collectors.joining(" ")));
    }
}
