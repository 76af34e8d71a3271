package dev.kanuki.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.contract.HolderProcess;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.LockUri;
import dev.kanuki.testkit.MariaDbServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.mariadb.jdbc.MariaDbDataSource;

/** What only the MySQL/MariaDB backend does: server-wide lock names of at most 64 characters, KILL QUERY, DataSources. */
@SuppressWarnings("try") // HolderProcess.close() may throw InterruptedException; some resources are only held
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("servers")
class MysqlLockTest {
    private static MariaDbServer server;
    private static String database;
    private static String uri;

    @TempDir
    Path tempDir;

    @BeforeAll
    static void server() {
        server = MariaDbServer.shared();
        database = server.createDatabase("mysql_specific");
        uri = server.kanukiUri(database) + "&restartGrace=0";
    }

    private static LockRequest request(String name) {
        return new LockRequest(name, LockMode.EXCLUSIVE, 1, Duration.ofSeconds(30));
    }

    /**
     * MySQL refuses GET_LOCK names over 64 characters. Every name becomes a digest-based name of
     * at most 64, and names that share a long prefix (longer than the readable part) stay apart.
     */
    @Test
    void mariadbSchemeIsTheSameBackendAsMysql() {
        try (LockProvider mysql = LockProvider.open(uri);
             LockProvider mariadb = LockProvider.open(uri.replaceFirst("^mysql:", "mariadb:"))) {
            try (LockHandle h = mariadb.lock("alias/job").acquire(Duration.ofSeconds(5))) {
                assertTrue(mysql.lock("alias/job").tryAcquire().isEmpty(), "mariadb:// and mysql:// must share locks");
                h.verify();
            }
        }
    }

    @Test
    void passwordsNeverAppearInMessages() {
        try (LockProvider locks = LockProvider.open(uri + "&password=")) {
            assertFalse(LockUri.parse(uri + "&password=hunter2").redacted().contains("hunter2"));
            assertFalse(locks.toString().contains("password=&"), locks.toString());
        }
    }

    @Test
    void namesOver64CharactersAreHashedAndStayDistinct() throws Exception {
        String prefix = "reports/2026/".repeat(10); // 130 characters
        List<String> names = List.of(prefix + "a", prefix + "b", "x".repeat(65), "x".repeat(1024),
                "名前".repeat(300), "🔒".repeat(400), prefix);
        try (LockProvider locks = LockProvider.open(uri); Connection raw = server.connect(database)) {
            List<LockHandle> held = new ArrayList<>();
            for (String name : names) {
                held.add(locks.lock(name).acquire(Duration.ofSeconds(5))); // distinct: none waits for another
            }
            try (PreparedStatement ps = raw.prepareStatement("SELECT name, lock_name, CHAR_LENGTH(lock_name),"
                    + " IS_USED_LOCK(lock_name) IS NOT NULL FROM kanuki_locks WHERE name = ?")) {
                for (String name : names) {
                    ps.setString(1, name);
                    try (ResultSet rs = ps.executeQuery()) {
                        assertTrue(rs.next(), "no owner record for a name of " + name.length() + " characters");
                        assertEquals(name, rs.getString(1), "the full name is kept in the record");
                        assertTrue(rs.getInt(3) <= 64, "GET_LOCK name of " + rs.getInt(3) + " characters: " + rs.getString(2));
                        assertTrue(rs.getBoolean(4), "the server does not show " + rs.getString(2) + " as locked");
                    }
                }
            }
            for (LockHandle h : held) {
                assertEquals(LockStatus.State.HELD, locks.status(h.name()).state());
                h.close();
            }
        }
    }

    @Test
    void theSameNameInTwoDatabasesIsTwoLocks() throws Exception {
        String otherDb = server.createDatabase("mysql_specific_other");
        try (LockProvider here = LockProvider.open(uri);
             LockProvider there = LockProvider.open(server.kanukiUri(otherDb) + "&restartGrace=0");
             LockHandle mine = here.lock("shared-name").acquire(Duration.ofSeconds(5))) {
            Optional<LockHandle> theirs = there.lock("shared-name").tryAcquire();
            assertTrue(theirs.isPresent(), "GET_LOCK names are server-wide; kanuki scopes them by database");
            theirs.get().close();
        }
    }

    @Test
    void interruptKillsAWaitInTheServer() throws Exception {
        LockUri parsed = LockUri.parse(uri);
        try (SqlLockBackend one = JdbcLockBackendFactory.create(parsed, null);
             SqlLockBackend two = JdbcLockBackendFactory.create(parsed, null)) {
            Grant held = one.tryAcquire(request("cancel/me")).orElseThrow();
            CompletableFuture<Thread> waiterThread = new CompletableFuture<>();
            CompletableFuture<Object> outcome = CompletableFuture.supplyAsync(() -> {
                waiterThread.complete(Thread.currentThread());
                try {
                    return two.awaitAcquire(request("cancel/me"), Duration.ofSeconds(60));
                } catch (InterruptedException e) {
                    return e;
                }
            });
            Thread.sleep(300);
            assertFalse(outcome.isDone(), "the waiter should be blocked in GET_LOCK");
            long start = System.nanoTime();
            waiterThread.get().interrupt();
            Object result = outcome.get(10, TimeUnit.SECONDS);
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(result instanceof InterruptedException, "expected InterruptedException, got " + result);
            // Back within outcome.get's 10 s of a 60 s wait: the interrupt ended it (no tighter
            // bound: under load that would time the machine, not the cancel).
            assertTrue(took < 10_000, "cancelling took " + took + " ms");
            one.release(held);
            Optional<Grant> after = one.tryAcquire(request("cancel/me"));
            assertTrue(after.isPresent(), "the killed waiter must not have taken the lock");
            one.release(after.get());
        }
    }

    @Test
    void statusNamesAHolderInAnotherProcess() throws Exception {
        try (LockProvider locks = LockProvider.open(uri);
             HolderProcess holder = HolderProcess.start(uri, "status/other", "exclusive", tempDir.resolve("holder.err"))) {
            LockStatus status = locks.status("status/other");
            assertEquals(LockStatus.State.HELD, status.state());
            assertEquals(holder.pid(), status.owner().orElseThrow().pid());
            assertEquals(holder.token(), status.lastFencingToken());
            holder.close();
            assertEquals(LockStatus.State.FREE, locks.status("status/other").state());
        }
    }

    /** A monitoring user that may only read sees who holds a lock, and is refused, with the reason, when it locks. */
    @Test
    void aReadOnlyUserReadsStatusButCannotLock() throws Exception {
        try (LockProvider locks = LockProvider.open(uri); // the tables exist before the grant
             Connection c = server.connect(database); java.sql.Statement st = c.createStatement()) {
            st.execute("CREATE USER IF NOT EXISTS 'watcher'@'%'");
            st.execute("GRANT SELECT ON `" + database + "`.* TO 'watcher'@'%'");
        }
        String readOnly = uri.replace("user=" + MariaDbServer.USER, "user=watcher");
        try (HolderProcess holder = HolderProcess.start(uri, "watched/job", "exclusive", tempDir.resolve("watched.err"));
             LockProvider watcher = LockProvider.open(readOnly)) {
            LockStatus status = watcher.status("watched/job");
            assertEquals(LockStatus.State.HELD, status.state());
            assertEquals(holder.pid(), status.owner().orElseThrow().pid(), "the holder must be named to a reader");
            assertTrue(watcher.list().stream().anyMatch(l -> l.name().equals("watched/job") && l.isHeld()));
            var refused = org.junit.jupiter.api.Assertions.assertThrows(dev.kanuki.LockBackendException.class,
                    () -> watcher.lock("watched/other").tryAcquire());
            assertTrue(refused.getMessage().contains("denied"), refused.getMessage());
        }
    }

    @Test
    void providerOverAnApplicationsDataSource() throws Exception {
        MariaDbDataSource ds = new MariaDbDataSource(server.jdbcUrl(database));
        try (LockProvider locks = JdbcLocks.provider(ds, Dialect.MYSQL, "restartGrace=0");
             LockProvider byUri = LockProvider.open(uri)) {
            try (LockHandle h = locks.lock("ds/job").acquire(Duration.ofSeconds(5))) {
                assertTrue(byUri.lock("ds/job").tryAcquire().isEmpty(), "the DataSource provider and the URI one share locks");
                assertEquals(h.fencingToken(), byUri.status("ds/job").lastFencingToken());
                assertNotEquals(-1, h.fencingToken());
            }
        }
    }

    /** A session lock is broken only by force, by ending the holder's session; the next holder fences it out. */
    @Test
    void breakingEndsTheHoldersSessionOnlyWithForce() throws Exception {
        try (LockProvider locks = LockProvider.open(uri);
             HolderProcess holder = HolderProcess.start(uri, "break/me", "exclusive", tempDir.resolve("b.err"))) {
            IllegalStateException refused = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                    () -> locks.breakLock("break/me", false));
            assertTrue(refused.getMessage().contains("pid " + holder.pid()), refused.getMessage());
            assertEquals(LockStatus.State.HELD, locks.status("break/me").state());
            LockStatus broken = locks.breakLock("break/me", true);
            assertEquals(LockStatus.State.HELD, broken.state());
            try (LockHandle mine = locks.lock("break/me").acquire(Duration.ofSeconds(10))) {
                assertTrue(mine.fencingToken() > holder.token());
            }
            assertEquals(LockStatus.State.FREE, locks.breakLock("break/me", false).state(), "nothing to break");
        }
    }
}
