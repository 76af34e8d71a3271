package dev.kanuki.bench;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.RunResult;

/**
 * Uncontended acquire + release of the ttl file strategies ({@code file:DIR?strategy=mkdir,
 * symlink, rename, create, queue}), kanuki beside the raw syscalls doing the work by hand, in one
 * run, per strategy:
 *
 * <ul>
 *   <li>{@code kanuki}: {@code acquire(5s)} then {@code close()} of one lock on a provider opened
 *       in setup (lease 30 s, the default; the watchdog renews every 10 s).</li>
 *   <li>{@code bare}: only the atomic step and its undo ({@link TtlByHand#bare()}): mkdir+rmdir,
 *       symlink+unlink, rename there and back, create(CREATE_NEW)+delete, append+read+append.</li>
 *   <li>{@code sameWork}: kanuki-file's syscalls for the strategy by hand ({@link TtlByHand#sameWork()}:
 *       entry, owner record, the directory's fencing counter moved by one rename, read-back,
 *       release check, removal): the fair baseline. Target: kanuki ≤ 1.5× of it. On a loaded
 *       machine take the ratios from {@link FileInterleaved}, which runs both in one JVM, interleaved.</li>
 * </ul>
 *
 * <p>Run (about two minutes on a 2-vCPU VM):
 * <pre>
 * mvn -q -DskipTests -pl kanuki-bench -am package
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.FileStrategyBench              # with ratios
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.FileStrategyBench -p strategy=rename
 * java -jar kanuki-bench/target/benchmarks.jar FileStrategyBench -prof gc                     # JMH table only
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class FileStrategyBench {
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    /** kanuki on {@code file:DIR?strategy=…} in a fresh temporary directory. */
    @State(Scope.Thread)
    public static class Kanuki {
        @Param({"mkdir", "symlink", "rename", "create", "queue"})
        public String strategy;
        Path dir;
        LockProvider provider;
        DistributedLock lock;

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            dir = BenchFiles.newTempDir("kanuki-bench-" + strategy);
            provider = LockProvider.open("file:" + dir + "?strategy=" + strategy);
            lock = provider.lock("bench");
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            if (provider != null) {
                provider.close();
            }
            BenchFiles.deleteQuietly(dir);
        }
    }

    /** The hand-written version, in a directory of its own. */
    @State(Scope.Thread)
    public static class ByHand {
        @Param({"mkdir", "symlink", "rename", "create", "queue"})
        public String strategy;
        Path dir;
        TtlByHand work;

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            dir = BenchFiles.newTempDir("kanuki-bench-raw-" + strategy);
            work = new TtlByHand(dir, strategy);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            BenchFiles.deleteQuietly(dir);
        }
    }

    @Benchmark
    public long kanuki(Kanuki s) {
        try (LockHandle h = s.lock.acquire(TIMEOUT)) {
            return h.fencingToken();
        }
    }

    @Benchmark
    public void bare(ByHand s) throws IOException {
        s.work.bare();
    }

    @Benchmark
    public long sameWork(ByHand s) throws IOException {
        return s.work.sameWork();
    }

    /**
     * Runs this benchmark through JMH (any JMH option may be given) and prints, per strategy,
     * kanuki beside the bare syscalls and beside the same work by hand, as ratios.
     *
     * @param args JMH command-line options
     * @throws Exception when JMH fails
     */
    public static void main(String[] args) throws Exception {
        List<RunResult> results = BenchSummary.run(FileStrategyBench.class, args);
        BenchSummary.printAveragesByParam(results, "strategy", List.of(
                new BenchSummary.Pair("kanuki", "bare"),
                new BenchSummary.Pair("kanuki", "sameWork")));
    }
}
