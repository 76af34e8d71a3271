package dev.kanuki.bench;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.Options;
import org.openjdk.jmh.runner.options.OptionsBuilder;
import org.openjdk.jmh.util.Statistics;

/**
 * Runs a benchmark class through JMH from its own {@code main} and prints kanuki beside the raw
 * primitive, one line per pair: {@code kanuki X µs vs raw Y µs = ratio}.
 */
final class BenchSummary {
    private BenchSummary() {
    }

    /** A kanuki result and the raw result it is compared with, by label. */
    record Pair(String kanuki, String raw) {
    }

    /**
     * Runs the benchmarks of {@code benchClass}, unless the command line names others.
     *
     * @param benchClass the JMH benchmark class
     * @param args JMH command-line options
     * @return the results of every run
     * @throws Exception when the options are bad or JMH fails
     */
    static List<RunResult> run(Class<?> benchClass, String[] args) throws Exception {
        CommandLineOptions cli = new CommandLineOptions(args);
        OptionsBuilder builder = new OptionsBuilder();
        builder.parent(cli);
        if (cli.getIncludes().isEmpty()) {
            builder.include("^" + benchClass.getName().replace(".", "\\.") + "\\.");
        }
        Options options = builder.build();
        return new ArrayList<>(new Runner(options).run());
    }

    /** Prints pairs compared by their average (the score of {@code avgt} benchmarks). */
    static void printAverages(Collection<RunResult> results, List<Pair> pairs) {
        Map<String, Result<?>> byMethod = new LinkedHashMap<>();
        for (RunResult r : results) {
            String benchmark = r.getParams().getBenchmark();
            byMethod.put(benchmark.substring(benchmark.lastIndexOf('.') + 1), r.getPrimaryResult());
        }
        System.out.println();
        System.out.println("kanuki vs raw (average per acquire+release):");
        for (Pair pair : pairs) {
            Result<?> k = byMethod.get(pair.kanuki());
            Result<?> raw = byMethod.get(pair.raw());
            if (k == null || raw == null) {
                System.out.printf("  %s vs %s: not measured%n", pair.kanuki(), pair.raw());
                continue;
            }
            System.out.printf(Locale.ROOT, "  %-16s %s vs %-24s %s = %.2fx%s%n",
                    pair.kanuki(), time(k.getScore(), k.getScoreUnit()),
                    pair.raw(), time(raw.getScore(), raw.getScoreUnit()), k.getScore() / raw.getScore(),
                    medians(k, raw));
        }
    }

    /**
     * Prints pairs compared by their average, once per value of a {@code @Param} (e.g. each file
     * strategy): within one value, {@link Pair} labels are benchmark method names.
     */
    static void printAveragesByParam(Collection<RunResult> results, String param, List<Pair> pairs) {
        Map<String, Map<String, Result<?>>> byValue = new LinkedHashMap<>();
        for (RunResult r : results) {
            String benchmark = r.getParams().getBenchmark();
            byValue.computeIfAbsent(String.valueOf(r.getParams().getParam(param)), v -> new LinkedHashMap<>())
                    .put(benchmark.substring(benchmark.lastIndexOf('.') + 1), r.getPrimaryResult());
        }
        System.out.println();
        System.out.println("kanuki vs raw (average per acquire+release), by " + param + ":");
        for (Map.Entry<String, Map<String, Result<?>>> value : byValue.entrySet()) {
            for (Pair pair : pairs) {
                Result<?> k = value.getValue().get(pair.kanuki());
                Result<?> raw = value.getValue().get(pair.raw());
                if (k == null || raw == null) {
                    continue;
                }
                System.out.printf(Locale.ROOT, "  %-8s %-8s %s vs %-9s %s = %.2fx%s%n", value.getKey(),
                        pair.kanuki(), time(k.getScore(), k.getScoreUnit()),
                        pair.raw(), time(raw.getScore(), raw.getScoreUnit()), k.getScore() / raw.getScore(),
                        medians(k, raw));
            }
        }
    }

    /**
     * Prints pairs of sample-time runs, labelled by a {@code @Param}, compared at the median and
     * also showing p90, p99 and the mean.
     */
    static void printPercentiles(Collection<RunResult> results, String param, List<Pair> pairs) {
        Map<String, Result<?>> byParam = new LinkedHashMap<>();
        for (RunResult r : results) {
            byParam.put(r.getParams().getParam(param), r.getPrimaryResult());
        }
        System.out.println();
        System.out.println("kanuki vs raw (per handoff = round trip / 2; p50 ratio, p90/p99/mean in brackets):");
        for (Pair pair : pairs) {
            Result<?> k = byParam.get(pair.kanuki());
            Result<?> raw = byParam.get(pair.raw());
            if (k == null || raw == null) {
                System.out.printf("  %s vs %s: not measured%n", pair.kanuki(), pair.raw());
                continue;
            }
            Statistics ks = k.getStatistics();
            Statistics rs = raw.getStatistics();
            String unit = k.getScoreUnit();
            System.out.printf(Locale.ROOT, "  %s %s vs %s %s = %.2fx   [p90 %s vs %s, p99 %s vs %s, mean %s vs %s = %.2fx]%n",
                    pair.kanuki(), time(ks.getPercentile(50), unit), pair.raw(), time(rs.getPercentile(50), unit),
                    ks.getPercentile(50) / rs.getPercentile(50),
                    time(ks.getPercentile(90), unit), time(rs.getPercentile(90), unit),
                    time(ks.getPercentile(99), unit), time(rs.getPercentile(99), unit),
                    time(ks.getMean(), unit), time(rs.getMean(), unit), ks.getMean() / rs.getMean());
        }
    }

    /**
     * The same pair compared by the median of its measurement iterations: on a shared machine a
     * burst of other load in one iteration moves the mean far more than the median.
     */
    private static String medians(Result<?> k, Result<?> raw) {
        Statistics ks = k.getStatistics();
        Statistics rs = raw.getStatistics();
        if (ks.getN() < 3 || rs.getN() < 3) {
            return "";
        }
        return String.format(Locale.ROOT, "   [iteration medians %s vs %s = %.2fx]",
                time(ks.getPercentile(50), k.getScoreUnit()), time(rs.getPercentile(50), raw.getScoreUnit()),
                ks.getPercentile(50) / rs.getPercentile(50));
    }

    private static String time(double value, String unit) {
        String u = unit.replace("/op", "").replace("us", "µs");
        return String.format(Locale.ROOT, value < 10 ? "%.2f %s" : "%.1f %s", value, u);
    }
}
