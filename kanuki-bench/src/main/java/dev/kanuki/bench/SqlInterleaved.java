package dev.kanuki.bench;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.jdbc.Dialect;
import dev.kanuki.jdbc.JdbcLocks;
import dev.kanuki.testkit.MariaDbServer;
import dev.kanuki.testkit.PostgresServer;
import dev.kanuki.testkit.ServerProcess;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * {@link SqlBench}'s PostgreSQL and MariaDB pairs again, but in <em>one</em> JVM on <em>one</em>
 * server, in interleaved blocks (kanuki try, bare, kanuki acquire, same statements await, kanuki
 * try + fencing token, same statements fenced; 1 000 ops each a round, in turns of {@value #BLOCK}; each round on a new
 * provider and a new raw connection), with ratios taken within each round and then the
 * median. {@link SqlBench} gives each benchmark its own fork and freshly started server, which on
 * a shared machine meets the other load at different moments; interleaving puts every pair
 * under the same load. Not JMH: the first rounds include warm-up, so they are dropped: at least
 * {@value #WARM_ROUNDS}, then until kanukiTry / bare settles ({@link WarmUp}).
 *
 * <pre>
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.SqlInterleaved [postgres|mariadb]…
 * </pre>
 */
public final class SqlInterleaved {
    private static final int OPS = 1000;
    /** Ops of one side before the next side's turn (1000 in a row let one burst of load decide a round's ratio). */
    private static final int BLOCK = 20;
    private static final int WARM_ROUNDS = 2;
    private static final int ROUNDS = 10;

    private SqlInterleaved() {
    }

    /** One block's work. */
    private interface Op {
        void run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        List<String> which = args.length > 0 ? List.of(args) : List.of("postgres", "mariadb");
        for (String db : which) {
            switch (db) {
                case "postgres" -> measure(db, PostgresServer.start(), Dialect.POSTGRESQL, (p, c) -> {
                    SqlByHand.Postgres raw = new SqlByHand.Postgres(c);
                    return new Pair(p, raw::bare, raw::sameStatementsAwait, raw::fenced, raw);
                });
                case "mariadb" -> measure(db, MariaDbServer.start(), Dialect.MYSQL, (p, c) -> {
                    SqlByHand.MariaDb raw = new SqlByHand.MariaDb(c);
                    return new Pair(p, () -> raw.bare(BigDecimal.ZERO), () -> raw.bare(new BigDecimal("5.000")),
                            raw::fenced, raw);
                });
                default -> throw new IllegalArgumentException("postgres or mariadb, not " + db);
            }
        }
    }

    /** The raw side of a round, on the connection kanuki's provider also uses. */
    private interface RawSide {
        Pair pair(LockProvider provider, Connection connection) throws SQLException;
    }

    /** Runs the rounds on a server this method stops when done. */
    private static void measure(String db, ServerProcess server, Dialect dialect, RawSide raw) throws Exception {
        try (server) {
            String name = server.createDatabase("bench");
            run(db, () -> {
                OneConnection one = new OneConnection(server.connect(name));
                return raw.pair(JdbcLocks.provider(one, dialect, SqlBench.NO_GRACE.substring(1)), one.physical());
            });
        }
    }

    /** One round's kanuki provider and raw connection, both new. */
    private record Pair(LockProvider provider, Op bare, Op sameAwait, Op sameFenced, AutoCloseable raw)
            implements AutoCloseable {
        @Override
        public void close() throws Exception {
            try (raw) {
                provider.close();
            }
        }
    }

    /** Opens a round's pair. */
    private interface PairFactory {
        Pair open() throws Exception;
    }

    /**
     * Every round opens a new provider and a new raw connection: which vCPU a connection's server
     * process lands on moves a loopback round trip by ±30 % here and stays for the connection's
     * life, so one pair of connections for the whole run would measure placement, not kanuki.
     */
    private static void run(String db, PairFactory pairs) throws Exception {
        String[] names = {"kanukiTry", "bare", "kanuki", "sameAwait", "kanukiFenced", "sameFenced"};
        List<double[]> rounds = new ArrayList<>();
        WarmUp warmUp = new WarmUp(db + " kanukiTry/bare", WARM_ROUNDS);
        while (rounds.size() < ROUNDS) {
            try (Pair pair = pairs.open()) {
                DistributedLock lock = pair.provider().lock("bench");
                Op[] ops = {() -> lock.tryAcquire().orElseThrow().close(), pair.bare(),
                        () -> lock.acquire(Duration.ofSeconds(5)).close(), pair.sameAwait(),
                        () -> {
                            try (LockHandle h = lock.tryAcquire().orElseThrow()) {
                                h.fencingToken();
                            }
                        },
                        pair.sameFenced()};
                for (Op op : ops) {
                    for (int i = 0; i < OPS / 10; i++) {
                        op.run(); // the new connections' statements get prepared, the name's tokens turn eager
                    }
                }
                // the sides take turns in blocks of BLOCK ops, so a burst of other load falls on all of them
                long[] nanos = new long[ops.length];
                for (int b = 0; b < OPS / BLOCK; b++) {
                    for (int k = 0; k < ops.length; k++) {
                        long start = System.nanoTime();
                        for (int i = 0; i < BLOCK; i++) {
                            ops[k].run();
                        }
                        nanos[k] += System.nanoTime() - start;
                    }
                }
                double[] micros = Arrays.stream(nanos).mapToDouble(n -> n / 1e3 / OPS).toArray();
                if (warmUp.warming()) {
                    warmUp.offer(micros[0] / micros[1]);
                } else {
                    rounds.add(micros);
                }
            }
        }
        System.out.printf(Locale.ROOT, "%s, %d rounds of %d ops, median µs/op:", db, ROUNDS, OPS);
        for (int k = 0; k < names.length; k++) {
            System.out.printf(Locale.ROOT, " %s %.0f", names[k], Rounds.median(rounds, k));
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "  median of per-round ratios: kanukiTry/bare %.2fx, kanuki/bare %.2fx,"
                        + " kanuki/sameAwait %.2fx, kanukiFenced/sameFenced %.2fx (sameFenced/bare %.2fx: what fencing"
                        + " costs)%n",
                Rounds.ratio(rounds, 0, 1), Rounds.ratio(rounds, 2, 1), Rounds.ratio(rounds, 2, 3),
                Rounds.ratio(rounds, 4, 5), Rounds.ratio(rounds, 5, 1));
    }
}
