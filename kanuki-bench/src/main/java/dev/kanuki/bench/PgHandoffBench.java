package dev.kanuki.bench;

import dev.kanuki.testkit.PostgresServer;
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
 * Blocking handoff between two processes on PostgreSQL: kanuki ({@code postgresql://…},
 * {@code acquire(timeout)}, i.e. {@code pg_advisory_lock} under {@code lock_timeout} in one
 * round trip; no fencing token asked for) beside raw blocking {@code pg_advisory_lock} /
 * {@code pg_advisory_unlock} on one connection per process. Same ring of three locks as
 * {@link HandoffBench}; the partner is a {@link HandoffPartner} JVM. A server from kanuki-testkit
 * is started in the trial's setup. Target: kanuki ≤ 1.2× raw.
 *
 * <pre>
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.PgHandoffBench
 * </pre>
 */
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
@State(Scope.Thread)
public class PgHandoffBench {

    @Param({"processesRawPgAdvisoryLock", "processesKanukiPostgres"})
    public String impl;

    private PostgresServer server;
    private HandoffPair pair;

    @Setup(Level.Trial)
    public void setUp() throws Exception {
        server = PostgresServer.start();
        String db = server.createDatabase("bench");
        String partner = switch (impl) {
            case "processesRawPgAdvisoryLock" -> HandoffParty.PG_ADVISORY_PREFIX + server.jdbcUrl(db);
            case "processesKanukiPostgres" -> HandoffParty.KANUKI_URI_PREFIX + server.kanukiUri(db) + SqlBench.NO_GRACE;
            default -> throw new IllegalArgumentException(impl);
        };
        try {
            pair = HandoffPair.open(HandoffPair.PROCESSES_PREFIX + partner);
        } catch (Exception | Error e) {
            server.close();
            throw e;
        }
    }

    /** One round trip, two handoffs. */
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
        try {
            if (pair != null) {
                pair.close();
            }
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }

    /**
     * Runs this benchmark through JMH and prints kanuki beside raw, as ratios.
     *
     * @param args JMH command-line options
     * @throws Exception when JMH fails
     */
    public static void main(String[] args) throws Exception {
        List<RunResult> results = BenchSummary.run(PgHandoffBench.class, args);
        BenchSummary.printPercentiles(results, "impl", List.of(
                new BenchSummary.Pair("processesKanukiPostgres", "processesRawPgAdvisoryLock")));
    }
}
