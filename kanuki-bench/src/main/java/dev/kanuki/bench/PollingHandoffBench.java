package dev.kanuki.bench;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.RunResult;
import org.openjdk.jmh.util.Statistics;

/**
 * Handoff between two processes on the ttl strategies of {@code file:} ({@code mkdir},
 * {@code symlink}, {@code rename}, {@code create}, {@code queue}): this JVM and a
 * {@link HandoffPartner} JVM, each with its own provider on one directory, pass the baton round
 * the three-lock {@link HandoffRing} of {@link HandoffBench}. A waiter of these strategies is
 * woken by the kernel's file notifications (inotify, through the backend's {@code watchChanges}:
 * the removal of the lock's entry, or for {@code queue} a change of its queue file) and otherwise
 * polls with the engine's backoff. Target: p50 ≤ 1 ms. How often a waiter tries is measured by
 * {@link PollingAttempts}.
 *
 * <p>Sample time; one invocation is a round trip, {@code @OperationsPerInvocation(2)} makes it
 * per handoff. Unit: µs.
 *
 * <p>Run (about a minute on a 2-vCPU VM):
 * <pre>
 * mvn -q -DskipTests -pl kanuki-bench -am package
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.PollingHandoffBench     # with p50/p90/p99 lines
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.PollingHandoffBench -p strategy=mkdir
 * </pre>
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class PollingHandoffBench {

    @Param({"mkdir", "symlink", "rename", "create", "queue"})
    public String strategy;

    private HandoffPair pair;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        pair = HandoffPair.open(HandoffPair.POLLING_PREFIX + strategy);
    }

    /** One round trip: this side's release lets the partner's polling find the lock, and back. */
    @Benchmark
    @OperationsPerInvocation(2)
    public void handoff() throws Exception {
        pair.step();
    }

    @TearDown(Level.Iteration)
    public void checkPartner() {
        pair.checkPartner();
    }

    @TearDown(Level.Trial)
    public void tearDown() throws Exception {
        if (pair != null) {
            pair.close();
        }
    }

    /**
     * Runs this benchmark through JMH (any JMH option may be given) and prints p50, p90, p99 and
     * the mean handoff per strategy against the 1 ms target.
     *
     * @param args JMH command-line options
     * @throws Exception when JMH fails
     */
    public static void main(String[] args) throws Exception {
        List<RunResult> results = BenchSummary.run(PollingHandoffBench.class, args);
        System.out.println();
        System.out.println("polling handoff between two processes (per handoff; target p50 <= 1 ms):");
        for (RunResult r : results) {
            Statistics st = r.getPrimaryResult().getStatistics();
            System.out.printf(Locale.ROOT, "  %-8s p50 %.2f ms  p90 %.2f ms  p99 %.2f ms  mean %.2f ms  (n=%d)%n",
                    r.getParams().getParam("strategy"), st.getPercentile(50) / 1000, st.getPercentile(90) / 1000,
                    st.getPercentile(99) / 1000, st.getMean() / 1000, st.getN());
        }
    }
}
