package dev.kanuki.jdbc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.FencedResource;
import dev.kanuki.FencedWriteRefusedException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.MariaDbServer;
import dev.kanuki.testkit.PostgresServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.mariadb.jdbc.MariaDbDataSource;
import org.postgresql.ds.PGSimpleDataSource;

/** A table row that refuses writes with stale fencing tokens, on PostgreSQL and MariaDB. */
@Tag("servers")
class JdbcFencedResourceTest {

    private static DataSource dataSource(String product) throws Exception {
        if (product.equals("postgresql")) {
            PostgresServer pg = PostgresServer.shared();
            PGSimpleDataSource ds = new PGSimpleDataSource();
            ds.setUrl(pg.jdbcUrl(pg.createDatabase("fenced")));
            return ds;
        }
        MariaDbServer db = MariaDbServer.shared();
        return new MariaDbDataSource(db.jdbcUrl(db.createDatabase("fenced")));
    }

    private static String uri(String product) {
        if (product.equals("postgresql")) {
            PostgresServer pg = PostgresServer.shared();
            return pg.kanukiUri(pg.createDatabase("fenced")) + "&restartGrace=0";
        }
        MariaDbServer db = MariaDbServer.shared();
        return db.kanukiUri(db.createDatabase("fenced")) + "&restartGrace=0";
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb"})
    void aLowerTokenIsRefusedAndWritesNothing(String product) throws Exception {
        FencedResource<byte[]> row = JdbcFencedResource.open(dataSource(product), "refusal-" + System.nanoTime());
        assertTrue(row.read().isEmpty());
        row.write(5, bytes("five"));
        row.write(7, bytes("seven"));
        FencedWriteRefusedException refused = assertThrows(FencedWriteRefusedException.class,
                () -> row.write(6, bytes("six")));
        assertEquals(6, refused.token());
        assertEquals(7, refused.newerToken());
        assertThrows(FencedWriteRefusedException.class, () -> row.write(7, bytes("seven again")));
        assertEquals(7, row.read().orElseThrow().token());
        assertArrayEquals(bytes("seven"), row.read().orElseThrow().value());
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb"})
    void concurrentFirstWritesKeepTheHighestToken(String product) throws Exception {
        DataSource ds = dataSource(product);
        String name = "first-" + System.nanoTime();
        ExecutorService pool = Executors.newFixedThreadPool(8);
        AtomicInteger refusedCount = new AtomicInteger();
        List<Future<?>> writes = new ArrayList<>();
        for (int t = 1; t <= 8; t++) {
            long token = t;
            writes.add(pool.submit(() -> {
                try {
                    JdbcFencedResource.open(ds, name).write(token, bytes("t" + token));
                } catch (FencedWriteRefusedException e) {
                    refusedCount.incrementAndGet();
                }
                return null;
            }));
        }
        for (Future<?> f : writes) {
            f.get();
        }
        pool.shutdown();
        FencedResource.Fenced<byte[]> stored = JdbcFencedResource.open(ds, name).read().orElseThrow();
        assertEquals(8, stored.token(), "the highest token's write must stand");
        assertArrayEquals(bytes("t8"), stored.value());
    }

    /** The case fencing exists for: a holder loses its lock, a newer holder writes, the old one resumes. */
    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb"})
    void aHolderWhoseLockWasBrokenCannotOverwriteTheNewerHolder(String product) throws Exception {
        String uri = uri(product);
        FencedResource<byte[]> report = JdbcFencedResource.open(dataSource(product), "report");
        // "localhost" for the second: another scope, so this JVM keeps no common queue for the two
        try (LockProvider first = LockProvider.open(uri);
             LockProvider second = LockProvider.open(uri.replace("127.0.0.1", "localhost"))) {
            LockHandle late = first.lock("report").acquire(Duration.ofSeconds(5));
            long lateToken = late.fencingToken();
            second.breakLock("report", true); // as an operator or a lease running out would
            try (LockHandle newer = second.lock("report").acquire(Duration.ofSeconds(10))) {
                report.write(newer, bytes("newer"));
            }
            assertThrows(FencedWriteRefusedException.class, () -> report.write(lateToken, bytes("late")));
            assertArrayEquals(bytes("newer"), report.read().orElseThrow().value());
            late.close();
        }
    }

    @org.junit.jupiter.api.Test
    void badTableNamesAreRefused() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        assertThrows(IllegalArgumentException.class, () -> JdbcFencedResource.open(ds, "x; DROP TABLE y", "r"));
        assertThrows(IllegalArgumentException.class, () -> JdbcFencedResource.open(ds, "t", ""));
    }
}
