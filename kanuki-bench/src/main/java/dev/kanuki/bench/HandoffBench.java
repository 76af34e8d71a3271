package dev.kanuki.bench;

import java.util.List;
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

/**
 * Handoff latency of a contended lock: the time from the holder's release to the waiter's
 * acquire, kanuki beside the raw primitive in the same run.
 *
 * <ul>
 *   <li>Between two threads of one JVM: {@code threadsKanukiMem} vs
 *       {@code threadsRawReentrantLock}; also {@code threadsKanukiFileOs} ({@code file:} os,
 *       where the engine's in-JVM gate hands the lock over and the OS lock is released and
 *       taken again on the way).</li>
 *   <li>Between two processes (JVMs): {@code processesKanukiFileOs} vs
 *       {@code processesRawFileChannel} (blocking {@code FileChannel.lock()}) and
 *       {@code processesRawFileChannelWithRecord} (the same plus the owner/fencing record kanuki
 *       rewrites under the lock, {@link OwnerRecordByHand}). The second process is a
 *       {@link HandoffPartner} started in the trial's setup from this JVM's class path.</li>
 * </ul>
 *
 * <p>The two parties pass the baton around a ring of three locks ({@link HandoffRing}): no turn
 * flag, no polling, strict alternation. One invocation is one step of this side, a round trip of
 * two handoffs; {@code @OperationsPerInvocation(2)} makes JMH report per handoff. Sample-time
 * mode gives the distribution (p50, p90, p99); the class's {@code main} prints the pairs as
 * ratios. Unit: µs.
 *
 * <p>Run (about a minute and a half on a 2-vCPU VM):
 * <pre>
 * mvn -q -DskipTests -pl kanuki-bench -am package
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.HandoffBench        # with ratios
 * java -jar kanuki-bench/target/benchmarks.jar HandoffBench                       # JMH table only
 * java -jar kanuki-bench/target/benchmarks.jar HandoffBench -p impl=processesKanukiFileOs,processesRawFileChannel
 * taskset -c 1 java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.HandoffBench  # one vCPU
 * </pre>
 *
 * <p>On a 2-vCPU VM the free-running numbers depend on whether the waiter's vCPU went idle
 * (waking a halted vCPU costs tens of µs), so they swing from run to run with the machine's
 * other load. Pinning everything to one vCPU ({@code taskset}; the partner inherits it) makes
 * every handoff a local context switch: steadier, and closer to the software cost of the path.
 * A partner process takes extra JVM options from {@code -Dkanuki.bench.partnerJvmArgs="..."}
 * (pass it to the fork with {@code -jvmArgsAppend}).
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
// Five warmup seconds, not three: C2 is still compiling kanuki's longer path after three on a
// busy 2-vCPU machine, and more so with both parties pinned to one vCPU.
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class HandoffBench {

    /** Which pair of parties; see {@link HandoffPair#KINDS}. */
    @Param({"threadsRawReentrantLock", "threadsKanukiMem", "threadsKanukiFileOs",
            "processesRawFileChannel", "processesRawFileChannelWithRecord", "processesKanukiFileOs"})
    public String impl;

    private HandoffPair pair;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        pair = HandoffPair.open(impl);
    }

    /** One round trip: this side's release wakes the partner, whose release wakes this side. */
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
     * Runs this benchmark through JMH (any JMH option may be given) and prints each kanuki pair
     * beside its raw primitive, as ratios.
     *
     * @param args JMH command-line options
     * @throws Exception when JMH fails
     */
    public static void main(String[] args) throws Exception {
        List<RunResult> results = BenchSummary.run(HandoffBench.class, args);
        BenchSummary.printPercentiles(results, "impl", List.of(
                new BenchSummary.Pair("threadsKanukiMem", "threadsRawReentrantLock"),
                new BenchSummary.Pair("threadsKanukiFileOs", "threadsRawReentrantLock"),
                new BenchSummary.Pair("processesKanukiFileOs", "processesRawFileChannel"),
                new BenchSummary.Pair("processesKanukiFileOs", "processesRawFileChannelWithRecord")));
    }
}
