package dev.kanuki.bench;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The arithmetic of the interleaved benchmarks: each measured round is one {@code double[]} with
 * a column per side (or per figure), and what is reported is the median over rounds of each
 * column and of ratios taken <em>within</em> each round, so that a burst of other load on this
 * shared machine moves both sides of a ratio alike.
 */
final class Rounds {
    private Rounds() {
    }

    /** The median of {@code values} (which is left unchanged). */
    static double median(double[] values) {
        double[] v = values.clone();
        Arrays.sort(v);
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    /** The median over rounds of column {@code col}. */
    static double median(List<double[]> rounds, int col) {
        return median(rounds.stream().mapToDouble(r -> r[col]).toArray());
    }

    /** The median over rounds of {@code column a / column b}, each ratio taken within its round. */
    static double ratio(List<double[]> rounds, int a, int b) {
        return median(rounds.stream().mapToDouble(r -> r[a] / r[b]).toArray());
    }

    /** Columns {@code from} (inclusive) to {@code to} (exclusive) of every round. */
    static List<double[]> columns(List<double[]> rounds, int from, int to) {
        return rounds.stream().map(r -> Arrays.copyOfRange(r, from, to)).toList();
    }

    /** {@code column a / column b} of every round, two decimals each, space-separated. */
    static String perRound(List<double[]> rounds, int a, int b) {
        return rounds.stream().map(r -> String.format(Locale.ROOT, "%.2f", r[a] / r[b]))
                .collect(Collectors.joining(" "));
    }

    /**
     * The {@code p}-th percentile (0–100, nearest rank) of {@code samples}, which it sorts.
     */
    static double percentile(long[] samples, double p) {
        if (samples.length == 0) {
            return Double.NaN;
        }
        Arrays.sort(samples);
        int rank = (int) Math.ceil(p / 100 * samples.length);
        return samples[Math.max(0, Math.min(samples.length - 1, rank - 1))];
    }

    /**
     * Prints one line: {@code TITLE: name1 m1 name2 m2 …}, each the median over rounds of its
     * column.
     */
    static void printMedians(String title, String[] names, List<double[]> rounds, String format) {
        StringBuilder line = new StringBuilder(title).append(':');
        for (int k = 0; k < names.length; k++) {
            line.append(' ').append(names[k]).append(' ').append(String.format(Locale.ROOT, format, median(rounds, k)));
        }
        System.out.println(line);
    }

    /**
     * Prints {@code  a/b = median of per-round ratios (per round: …)[ target]}.
     */
    static void printRatio(String label, List<double[]> rounds, int a, int b, String target) {
        System.out.printf(Locale.ROOT, "  %-32s %.2fx   (per round: %s)%s%n", label, ratio(rounds, a, b),
                perRound(rounds, a, b), target.isEmpty() ? "" : "   target " + target);
    }
}
