package dev.kanuki.bench;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.MariaDbServer;
import dev.kanuki.testkit.PostgresServer;
import dev.kanuki.testkit.ServerProcess;
import java.math.BigDecimal;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
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
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.RunResult;

/**
 * Uncontended acquire + release on the SQL backends, kanuki beside the raw JDBC driver in the
 * same run ({@link SqlByHand}):
 *
 * <ul>
 *   <li>SQLite ({@code sqlite:DIR}, WAL, synchronous=normal): {@code sqliteBare} is
 *       {@code BEGIN IMMEDIATE} + {@code COMMIT}; {@code sqliteSameStatements} is what kanuki runs
 *       (BEGIN IMMEDIATE, UPDATE … RETURNING token, COMMIT, BEGIN IMMEDIATE, SELECT record,
 *       ROLLBACK). Target: kanuki ≤ 1.5× the same statements.</li>
 *   <li>PostgreSQL (a real server from kanuki-testkit): {@code postgresBare} is
 *       {@code pg_try_advisory_lock} + {@code pg_advisory_unlock}, which is also what kanuki's
 *       {@code tryAcquire()} runs; {@code postgresSameAwait} is kanuki's {@code acquire(timeout)}
 *       batch ({@code set_config('lock_timeout')} + {@code pg_advisory_lock}) + unlock. Target:
 *       ≤ 1.2× raw. {@code postgresKanukiFenced} also asks for the fencing token; on a name whose
 *       holders ask, kanuki issues it with the acquisition ({@code postgresSameFenced}: the try
 *       and the token upsert in one statement, then unlock, by hand).</li>
 *   <li>MariaDB (a real server): {@code mariadbBare} is {@code GET_LOCK(name, 0)} +
 *       {@code RELEASE_LOCK} (kanuki's {@code tryAcquire()}); {@code mariadbSameAwait} the same
 *       with a 5 s timeout (kanuki's {@code acquire(timeout)}); {@code mariadbSameFenced} adds
 *       kanuki's token write. Target: ≤ 1.2× raw.</li>
 * </ul>
 *
 * <p>kanuki's URIs carry {@code restartGrace=0}: a freshly started server would otherwise make
 * kanuki refuse every lock for its first 5 s (documented in {@code docs/backends/sql.md}).
 *
 * <p>Each server is started by the trial's setup of each benchmark that needs it (a few seconds
 * per benchmark) and stopped in its teardown; needs PostgreSQL 15 and MariaDB installed (the
 * testkit names the missing package). kanuki's lock and the raw lock use different keys on the
 * same database.
 *
 * <p>Run (about three minutes on a 2-vCPU VM):
 * <pre>
 * mvn -q -DskipTests -pl kanuki-bench -am package
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.SqlBench                   # with ratios
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.SqlBench 'SqlBench.postgres.*'
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(1)
public class SqlBench {
    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static final String NAME = "bench";
    private static final BigDecimal FIVE_SECONDS = new BigDecimal("5.000");
    /**
     * kanuki grants nothing for {@code restartGrace} (default 5 s) after the server started, so
     * that a lock held before a restart is not handed out twice; the servers here have just
     * started, and the benchmark measures the steady state.
     */
    static final String NO_GRACE = "&restartGrace=0";

    /** kanuki {@code sqlite:} and a raw connection, each in a temporary directory. */
    @State(Scope.Thread)
    public static class Sqlite {
        Path dir;
        Path rawDir;
        LockProvider provider;
        DistributedLock lock;
        SqlByHand.Sqlite raw;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            dir = BenchFiles.newTempDir("kanuki-bench-sqlite");
            rawDir = BenchFiles.newTempDir("kanuki-bench-sqlite-raw");
            provider = LockProvider.open("sqlite:" + dir);
            lock = provider.lock(NAME);
            raw = new SqlByHand.Sqlite(rawDir.resolve("bench.db"));
        }

        @TearDown(Level.Trial)
        public void tearDown() throws SQLException {
            if (raw != null) {
                raw.close();
            }
            if (provider != null) {
                provider.close();
            }
            BenchFiles.deleteQuietly(dir);
            BenchFiles.deleteQuietly(rawDir);
        }
    }

    /**
     * A database server from kanuki-testkit, kanuki on it, and a raw connection: started in the
     * trial's setup, stopped in its teardown.
     *
     * @param <R> the raw side
     */
    public abstract static class Server<R extends AutoCloseable> {
        ServerProcess server;
        LockProvider provider;
        DistributedLock lock;
        R raw;

        abstract ServerProcess start();

        abstract R raw(Connection c) throws SQLException;

        @Setup(Level.Trial)
        public void setUp() throws Exception {
            server = start();
            String db = server.createDatabase("bench");
            provider = LockProvider.open(server.kanukiUri(db) + NO_GRACE); // also makes kanuki's tables
            lock = provider.lock(NAME);
            raw = raw(server.connect(db));
        }

        @TearDown(Level.Trial)
        public void tearDown() throws Exception {
            try {
                if (raw != null) {
                    raw.close();
                }
                if (provider != null) {
                    provider.close();
                }
            } finally {
                if (server != null) {
                    server.close();
                }
            }
        }
    }

    /** A PostgreSQL server, kanuki on it, and a raw connection. */
    @State(Scope.Thread)
    public static class Postgres extends Server<SqlByHand.Postgres> {
        @Override
        ServerProcess start() {
            return PostgresServer.start();
        }

        @Override
        SqlByHand.Postgres raw(Connection c) throws SQLException {
            return new SqlByHand.Postgres(c);
        }
    }

    /** A MariaDB server, kanuki on it, and a raw connection. */
    @State(Scope.Thread)
    public static class MariaDb extends Server<SqlByHand.MariaDb> {
        @Override
        ServerProcess start() {
            return MariaDbServer.start();
        }

        @Override
        SqlByHand.MariaDb raw(Connection c) throws SQLException {
            return new SqlByHand.MariaDb(c);
        }
    }

    static boolean kanuki(DistributedLock lock) {
        try (LockHandle h = lock.acquire(TIMEOUT)) {
            return h.isHeld();
        }
    }

    static boolean kanukiTry(DistributedLock lock) {
        try (LockHandle h = lock.tryAcquire().orElseThrow()) {
            return h.isHeld();
        }
    }

    static long kanukiFenced(DistributedLock lock) {
        try (LockHandle h = lock.tryAcquire().orElseThrow()) {
            return h.fencingToken();
        }
    }

    @Benchmark
    public long sqliteKanuki(Sqlite s) {
        return kanukiFenced(s.lock); // SQLite issues the token while acquiring: asking costs nothing more
    }

    @Benchmark
    public boolean sqliteKanukiTry(Sqlite s) {
        return kanukiTry(s.lock);
    }

    @Benchmark
    public void sqliteBare(Sqlite s) throws SQLException {
        s.raw.bare();
    }

    @Benchmark
    public long sqliteSameStatements(Sqlite s) throws SQLException {
        return s.raw.sameStatements();
    }

    @Benchmark
    public boolean postgresKanuki(Postgres s) {
        return kanuki(s.lock);
    }

    @Benchmark
    public boolean postgresKanukiTry(Postgres s) {
        return kanukiTry(s.lock);
    }

    @Benchmark
    public long postgresKanukiFenced(Postgres s) {
        return kanukiFenced(s.lock);
    }

    @Benchmark
    public void postgresBare(Postgres s) throws SQLException {
        s.raw.bare();
    }

    @Benchmark
    public void postgresSameAwait(Postgres s) throws SQLException {
        s.raw.sameStatementsAwait();
    }

    @Benchmark
    public long postgresSameFenced(Postgres s) throws SQLException {
        return s.raw.fenced();
    }

    @Benchmark
    public boolean mariadbKanuki(MariaDb s) {
        return kanuki(s.lock);
    }

    @Benchmark
    public boolean mariadbKanukiTry(MariaDb s) {
        return kanukiTry(s.lock);
    }

    @Benchmark
    public long mariadbKanukiFenced(MariaDb s) {
        return kanukiFenced(s.lock);
    }

    @Benchmark
    public void mariadbBare(MariaDb s) throws SQLException {
        s.raw.bare(BigDecimal.ZERO);
    }

    @Benchmark
    public void mariadbSameAwait(MariaDb s) throws SQLException {
        s.raw.bare(FIVE_SECONDS);
    }

    @Benchmark
    public long mariadbSameFenced(MariaDb s) throws SQLException {
        return s.raw.fenced();
    }

    /**
     * Runs this benchmark through JMH (any JMH option may be given) and prints kanuki beside the
     * raw driver, as ratios.
     *
     * @param args JMH command-line options
     * @throws Exception when JMH fails
     */
    public static void main(String[] args) throws Exception {
        List<RunResult> results = BenchSummary.run(SqlBench.class, args);
        BenchSummary.printAverages(results, List.of(
                new BenchSummary.Pair("sqliteKanuki", "sqliteBare"),
                new BenchSummary.Pair("sqliteKanuki", "sqliteSameStatements"),
                new BenchSummary.Pair("sqliteKanukiTry", "sqliteSameStatements"),
                new BenchSummary.Pair("postgresKanukiTry", "postgresBare"),
                new BenchSummary.Pair("postgresKanuki", "postgresBare"),
                new BenchSummary.Pair("postgresKanuki", "postgresSameAwait"),
                new BenchSummary.Pair("postgresKanukiFenced", "postgresSameFenced"),
                new BenchSummary.Pair("postgresSameFenced", "postgresBare"),
                new BenchSummary.Pair("mariadbKanukiTry", "mariadbBare"),
                new BenchSummary.Pair("mariadbKanuki", "mariadbBare"),
                new BenchSummary.Pair("mariadbKanuki", "mariadbSameAwait"),
                new BenchSummary.Pair("mariadbKanukiFenced", "mariadbSameFenced"),
                new BenchSummary.Pair("mariadbSameFenced", "mariadbBare")));
    }
}
