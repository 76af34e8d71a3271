package dev.kanuki.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kanuki.LockProvider;
import dev.kanuki.testkit.MissingServerException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.openjdk.jmh.annotations.Param;

/**
 * Runs every benchmark body a few times without JMH, so a broken benchmark shows up in
 * {@code mvn test} instead of halfway through a long run. Measures nothing. Benchmarks on the
 * {@code file:} backend are skipped while no kanuki backend handles {@code file:}.
 */
@Tag("servers")
@Tag("slow")
class BenchSmokeTest {

    private static boolean fileBackendPresent() throws java.io.IOException {
        // A directory of our own: kanuki-file refuses one every user can write, such as /tmp itself.
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("kanuki-bench-probe");
        try (LockProvider ignored = LockProvider.open("file:" + dir + "?strategy=os")) {
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        } finally {
            java.nio.file.Files.deleteIfExists(dir);
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void uncontendedMemAndRaw() throws Exception {
        UncontendedBench bench = new UncontendedBench();
        UncontendedBench.Mem mem = new UncontendedBench.Mem();
        mem.setUp();
        try {
            long first = bench.kanukiMem(mem);
            long second = bench.kanukiMemTry(mem);
            assertEquals(first + 1, second, "fencing tokens increase by one per acquisition");
        } finally {
            mem.tearDown();
        }
        bench.rawReentrantLock(new UncontendedBench.Reentrant());
        UncontendedBench.RawFile raw = new UncontendedBench.RawFile();
        raw.setUp();
        try {
            bench.rawFileChannel(raw);
            for (long expected = 1; expected <= 5; expected++) {
                assertEquals(expected, bench.rawFileChannelWithRecord(raw), "the record's counter");
            }
            assertEquals(6, bench.rawFileChannelWithRecordAndCheck(raw), "the record's counter");
        } finally {
            raw.tearDown();
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void uncontendedFileOs() throws Exception {
        assumeTrue(fileBackendPresent(), "no kanuki backend handles 'file:' yet (kanuki-file)");
        UncontendedBench bench = new UncontendedBench();
        UncontendedBench.FileOs os = new UncontendedBench.FileOs();
        os.setUp();
        try {
            long first = bench.kanukiFileOs(os);
            long second = bench.kanukiFileOsTry(os);
            assertEquals(first + 1, second, "fencing tokens increase by one per acquisition");
        } finally {
            os.tearDown();
        }
    }

    @Test
    void recordByHandRejectsDamage(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("damaged.lock");
        Files.write(file, new byte[OwnerRecordByHand.SIZE]);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            assertThrows(IOException.class, () -> new OwnerRecordByHand().stamp(channel));
        }
    }

    @Test
    void handoffBenchRunsEveryKind() throws Exception {
        String[] values = HandoffBench.class.getField("impl").getAnnotation(Param.class).value();
        assertEquals(HandoffPair.KINDS, List.of(values), "HandoffBench's @Param and HandoffPair.KINDS must agree");
    }

    @ParameterizedTest
    @MethodSource("dev.kanuki.bench.HandoffPair#kinds")
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void handoff(String kind) throws Exception {
        if (kind.contains("KanukiFileOs")) {
            assumeTrue(fileBackendPresent(), "no kanuki backend handles 'file:' yet (kanuki-file)");
        }
        try (HandoffPair pair = HandoffPair.open(kind)) {
            for (int i = 0; i < 200; i++) {
                pair.step();
            }
            pair.checkPartner();
        }
    }

    @Test
    void fileStrategyBenchCoversEveryTtlStrategy() throws Exception {
        for (Class<?> state : List.of(FileStrategyBench.Kanuki.class, FileStrategyBench.ByHand.class)) {
            String[] values = state.getField("strategy").getAnnotation(Param.class).value();
            assertEquals(List.of(TtlByHand.STRATEGIES), List.of(values), state.getSimpleName() + "'s @Param");
        }
        String[] polling = PollingHandoffBench.class.getField("strategy").getAnnotation(Param.class).value();
        assertEquals(List.of(TtlByHand.STRATEGIES), List.of(polling), "PollingHandoffBench's @Param");
    }

    @ParameterizedTest
    @ValueSource(strings = {"mkdir", "symlink", "rename", "create", "queue"})
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void fileStrategy(String strategy) throws Exception {
        assumeTrue(fileBackendPresent(), "no kanuki backend handles 'file:' yet (kanuki-file)");
        FileStrategyBench bench = new FileStrategyBench();
        FileStrategyBench.Kanuki kanuki = new FileStrategyBench.Kanuki();
        kanuki.strategy = strategy;
        kanuki.setUp();
        try {
            long first = bench.kanuki(kanuki);
            assertEquals(first + 1, bench.kanuki(kanuki), "fencing tokens increase by one per acquisition");
        } finally {
            kanuki.tearDown();
        }
        FileStrategyBench.ByHand byHand = new FileStrategyBench.ByHand();
        byHand.strategy = strategy;
        byHand.setUp();
        try {
            for (int i = 0; i < 3; i++) {
                bench.bare(byHand);
            }
            // the hand-written counter moves by one per acquisition, as kanuki's directory counter does
            long first = bench.sameWork(byHand);
            for (int i = 1; i <= 3; i++) {
                bench.bare(byHand); // the bare side shares the directory without disturbing the other
                assertEquals(first + i, bench.sameWork(byHand), "the hand-written fencing counter");
            }
        } finally {
            byHand.tearDown();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mkdir", "symlink", "rename", "create", "queue"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void pollingHandoff(String strategy) throws Exception {
        assumeTrue(fileBackendPresent(), "no kanuki backend handles 'file:' yet (kanuki-file)");
        try (HandoffPair pair = HandoffPair.open(HandoffPair.POLLING_PREFIX + strategy)) {
            for (int i = 0; i < 10; i++) {
                pair.step();
            }
            pair.checkPartner();
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void pollingAttemptsCountsAWaiter() throws Exception {
        assumeTrue(fileBackendPresent(), "no kanuki backend handles 'file:' yet (kanuki-file)");
        assumeTrue(Files.isExecutable(Path.of("/usr/bin/strace")), "strace is not installed");
        PollingAttempts.Result r = PollingAttempts.measure("mkdir", 300, null);
        assertTrue(r.attempts() >= 2, "a waiter held off for 0.3 s tries more than once: " + r);
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void sqlSqlite() throws Exception {
        SqlBench bench = new SqlBench();
        SqlBench.Sqlite s = new SqlBench.Sqlite();
        s.setUp();
        try {
            long first = bench.sqliteKanuki(s);
            assertTrue(bench.sqliteKanukiTry(s));
            long third = bench.sqliteKanuki(s);
            // Tokens rise with every acquisition (by one, or to the clock's microseconds when higher).
            assertTrue(third >= first + 2, "SQLite issues a token with every acquisition: " + first + " then " + third);
            bench.sqliteBare(s);
            long byHand = bench.sqliteSameStatements(s);
            assertTrue(byHand > 1_000_000_000_000_000L, "the hand-written token has the clock's floor: " + byHand);
            assertTrue(bench.sqliteSameStatements(s) > byHand, "the hand-written token rises");
        } finally {
            s.tearDown();
        }
    }

    /** What a smoke test does with a started server benchmark state. */
    private interface ServerChecks<S> {
        void run(SqlBench bench, S state) throws Exception;
    }

    /** Starts the state's server (skipping when it is not installed), runs the checks, stops it. */
    private static <S extends SqlBench.Server<?>> void withServer(S state, ServerChecks<S> checks) throws Exception {
        try {
            state.setUp();
        } catch (MissingServerException e) {
            assumeTrue(false, e.getMessage());
        }
        try {
            checks.run(new SqlBench(), state);
        } finally {
            state.tearDown();
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void sqlPostgres() throws Exception {
        withServer(new SqlBench.Postgres(), (bench, s) -> {
            assertTrue(bench.postgresKanuki(s));
            assertTrue(bench.postgresKanukiTry(s));
            long first = bench.postgresKanukiFenced(s);
            assertEquals(first + 1, bench.postgresKanukiFenced(s), "fencing tokens increase by one per token asked for");
            bench.postgresBare(s);
            bench.postgresSameAwait(s);
            long t = bench.postgresSameFenced(s);
            assertEquals(t + 1, bench.postgresSameFenced(s), "the hand-written token");
        });
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void sqlMariaDb() throws Exception {
        withServer(new SqlBench.MariaDb(), (bench, s) -> {
            assertTrue(bench.mariadbKanuki(s));
            assertTrue(bench.mariadbKanukiTry(s));
            long first = bench.mariadbKanukiFenced(s);
            assertEquals(first + 1, bench.mariadbKanukiFenced(s), "fencing tokens increase by one per token asked for");
            bench.mariadbBare(s);
            bench.mariadbSameAwait(s);
            long t = bench.mariadbSameFenced(s);
            assertEquals(t + 1, bench.mariadbSameFenced(s), "the hand-written token");
        });
    }

    @ParameterizedTest
    @ValueSource(strings = {"processesRawPgAdvisoryLock", "processesKanukiPostgres"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void pgHandoff(String impl) throws Exception {
        PgHandoffBench bench = new PgHandoffBench();
        bench.impl = impl;
        try {
            bench.setUp();
        } catch (MissingServerException e) {
            assumeTrue(false, e.getMessage());
        }
        try {
            for (int i = 0; i < 20; i++) {
                bench.handoff();
            }
            bench.checkPartner();
        } finally {
            bench.tearDown();
        }
    }
}
