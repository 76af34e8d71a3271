package dev.kanuki.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The interleaved measurement shared by the plain-{@code main} benchmarks ({@link FileInterleaved},
 * {@link MemcachedInterleaved}): kanuki and the by-hand sides take turns in one JVM, in short
 * blocks of operations, so that the machine's other load (heavy and bursty on a shared VM) falls
 * on every side alike. Each round gives every side's mean µs/op; ratios are taken within a round,
 * then the median over rounds. The first rounds are warm-up and are dropped: at least the
 * benchmark's minimum, then until the measuring thread's CPU time of side 0 / side 1 (kanuki / its
 * baseline) settles ({@link WarmUp}): the CPU ratio shows the JIT's progress, while the wall-clock
 * ratio of a round of microsecond operations swings by 2–10× with the machine's other load.
 */
final class Interleaved {
    private Interleaved() {
    }

    /** One operation of one side. */
    interface Op {
        void run() throws Exception;
    }

    /** Makes the sides of one round (e.g. a new provider and new raw files), in a fixed order. */
    interface RoundSetup {
        Round open(int round) throws Exception;
    }

    /** The sides of one round; closed when the round ends. */
    interface Round extends AutoCloseable {
        Op[] ops();

        @Override
        default void close() throws Exception {
        }
    }

    /**
     * Runs warm-up rounds ({@link WarmUp}: at least {@code warmRounds}, until the CPU ratio side 0 /
     * side 1 settles; none if 0), then {@code rounds} rounds; in each, {@code blocks} times, each side
     * runs {@code block} operations in turn.
     *
     * @return per measured round, each side's mean µs per operation
     */
    static List<double[]> measure(RoundSetup setup, int warmRounds, int rounds, int blocks, int block) throws Exception {
        return measureWithCpu(setup, warmRounds, rounds, blocks, block).wall();
    }

    /**
     * Per measured round, each side's mean wall-clock µs per operation, and the CPU µs per
     * operation of the measuring thread (which does all of an uncontended operation's work): the
     * CPU time does not count the time the thread waited for a CPU, so it moves far less with the
     * machine's other load.
     */
    record Measured(List<double[]> wall, List<double[]> cpu) {
    }

    /** {@link #measure}, with the measuring thread's CPU time per side as well. */
    static Measured measureWithCpu(RoundSetup setup, int warmRounds, int rounds, int blocks, int block) throws Exception {
        java.lang.management.ThreadMXBean threads = java.lang.management.ManagementFactory.getThreadMXBean();
        List<double[]> wall = new ArrayList<>();
        List<double[]> cpu = new ArrayList<>();
        WarmUp warmUp = new WarmUp("CPU side 0 / side 1", warmRounds);
        for (int round = 0; wall.size() < rounds; round++) {
            try (Round r = setup.open(round)) {
                Op[] ops = r.ops();
                long[] nanos = new long[ops.length];
                long[] cpuNanos = new long[ops.length];
                for (int b = 0; b < blocks; b++) {
                    for (int k = 0; k < ops.length; k++) {
                        long cpuStart = threads.getCurrentThreadCpuTime();
                        long start = System.nanoTime();
                        for (int i = 0; i < block; i++) {
                            ops[k].run();
                        }
                        nanos[k] += System.nanoTime() - start;
                        cpuNanos[k] += threads.getCurrentThreadCpuTime() - cpuStart;
                    }
                }
                if (warmUp.warming()) {
                    warmUp.offer((double) cpuNanos[0] / cpuNanos[1]);
                } else {
                    wall.add(perOp(nanos, (double) block * blocks));
                    cpu.add(perOp(cpuNanos, (double) block * blocks));
                }
            }
        }
        return new Measured(wall, cpu);
    }

    private static double[] perOp(long[] nanos, double ops) {
        return Arrays.stream(nanos).mapToDouble(n -> n / 1e3 / ops).toArray();
    }

    /**
     * Times each operation of every side, alternating blocks of {@code block} operations; each
     * block starts with the next side, so that no side always follows the same one.
     *
     * @return per side, the median µs of one operation, then per side the mean
     */
    static double[] perOperation(Op[] ops, int blocks, int block) throws Exception {
        long[][] samples = new long[ops.length][block * blocks];
        for (int b = 0; b < blocks; b++) {
            for (int j = 0; j < ops.length; j++) {
                int k = (b + j) % ops.length;
                for (int i = 0; i < block; i++) {
                    long start = System.nanoTime();
                    ops[k].run();
                    samples[k][b * block + i] = System.nanoTime() - start;
                }
            }
        }
        double[] micros = new double[2 * ops.length];
        for (int k = 0; k < ops.length; k++) {
            micros[ops.length + k] = java.util.Arrays.stream(samples[k]).average().orElseThrow() / 1e3;
            micros[k] = Rounds.percentile(samples[k], 50) / 1e3;
        }
        return micros;
    }
}
