package dev.kanuki.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.contract.HolderProcess;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.LockUri;
import dev.kanuki.testkit.PostgresServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;

/** What only the PostgreSQL backend does: 64-bit keys and their collisions, shared locks, cancelling a wait, DataSources. */
@SuppressWarnings("try") // HolderProcess.close() may throw InterruptedException; some resources are only held
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("servers")
class PostgresLockTest {
    private static PostgresServer pg;
    private static String database;
    private static String uri;

    @TempDir
    Path tempDir;

    @BeforeAll
    static void server() {
        pg = PostgresServer.shared();
        database = pg.createDatabase("pg_specific");
        uri = pg.kanukiUri(database) + "&restartGrace=0";
    }

    private static LockRequest request(String name, LockMode mode) {
        return new LockRequest(name, mode, 1, Duration.ofSeconds(30));
    }

    /**
     * Two names forced onto one advisory key: they exclude each other (never two holders), keep
     * their own tokens, and the collision is detected and reported when the second name's row
     * is registered next to the first's.
     */
    @Test
    void hashCollisionsAreDetectedAndStaySafe() {
        LockUri parsed = LockUri.parse(uri);
        try (SqlLockBackend one = JdbcLockBackendFactory.create(parsed, name -> 42L);
             SqlLockBackend two = JdbcLockBackendFactory.create(parsed, name -> 42L)) {
            Grant alpha = one.tryAcquire(request("collide/alpha", LockMode.EXCLUSIVE)).orElseThrow();
            long alphaToken = alpha.fencingToken();
            assertTrue(two.tryAcquire(request("collide/beta", LockMode.EXCLUSIVE)).isEmpty(),
                    "names on one key must exclude each other: two holders of one advisory lock are impossible");
            assertTrue(two.collisionsDetected().contains("collide/alpha\ncollide/beta"),
                    "registering beta must report the other name on the key: " + two.collisionsDetected());
            LockStatus betaWhileAlpha = two.status("collide/beta");
            assertEquals(LockStatus.State.HELD, betaWhileAlpha.state(), "beta cannot be taken now: it is held");
            assertEquals(0, betaWhileAlpha.lastFencingToken(), "beta has its record but no token yet: none borrowed");
            one.release(alpha);

            Grant beta = two.tryAcquire(request("collide/beta", LockMode.EXCLUSIVE)).orElseThrow();
            assertNotEquals(alphaToken + 1, beta.fencingToken(), "beta's tokens are its own (from the clock), not alpha's");
            LockStatus alphaWhileBeta = one.status("collide/alpha");
            assertEquals(LockStatus.State.HELD, alphaWhileBeta.state(), "the key is held, so alpha cannot be taken");
            assertEquals(alphaToken, alphaWhileBeta.lastFencingToken(), "alpha's token stays alpha's");
            assertTrue(two.verify(beta));
            assertFalse(one.verify(alpha), "a released grant is not held, whoever holds the key");
            two.release(beta);

            Grant alphaAgain = one.tryAcquire(request("collide/alpha", LockMode.EXCLUSIVE)).orElseThrow();
            assertEquals(alphaToken + 1, alphaAgain.fencingToken());
            one.release(alphaAgain);
        }
    }

    @Test
    void readersSeeTheLastWritersToken() {
        try (LockProvider locks = LockProvider.open(uri)) {
            var rw = locks.readWriteLock("shared/token");
            long written;
            try (LockHandle w = rw.writeLock().acquire(Duration.ofSeconds(5))) {
                written = w.fencingToken();
            }
            try (LockHandle r = rw.readLock().acquire(Duration.ofSeconds(5))) {
                assertEquals(written, r.fencingToken());
                assertEquals(LockStatus.State.HELD_SHARED, locks.status("shared/token").state());
                r.verify();
            }
            try (LockHandle w = rw.writeLock().acquire(Duration.ofSeconds(5))) {
                assertTrue(w.fencingToken() > written);
            }
        }
    }

    @Test
    void interruptCancelsAWaitInTheServer() throws Exception {
        LockUri parsed = LockUri.parse(uri);
        try (SqlLockBackend one = JdbcLockBackendFactory.create(parsed, null);
             SqlLockBackend two = JdbcLockBackendFactory.create(parsed, null)) {
            Grant held = one.tryAcquire(request("cancel/me", LockMode.EXCLUSIVE)).orElseThrow();
            CompletableFuture<Thread> waiterThread = new CompletableFuture<>();
            CompletableFuture<Object> outcome = CompletableFuture.supplyAsync(() -> {
                waiterThread.complete(Thread.currentThread());
                try {
                    return two.awaitAcquire(request("cancel/me", LockMode.EXCLUSIVE), Duration.ofSeconds(60));
                } catch (InterruptedException e) {
                    return e;
                }
            });
            Thread.sleep(300);
            assertFalse(outcome.isDone(), "the waiter should be blocked in pg_advisory_lock");
            long start = System.nanoTime();
            waiterThread.get().interrupt();
            Object result = outcome.get(10, TimeUnit.SECONDS);
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(result instanceof InterruptedException, "expected InterruptedException, got " + result);
            // Back within outcome.get's 10 s of a 60 s wait: the interrupt ended it (no tighter
            // bound: under load that would time the machine, not the cancel).
            assertTrue(took < 10_000, "cancelling took " + took + " ms");
            one.release(held);
            Optional<Grant> after = one.tryAcquire(request("cancel/me", LockMode.EXCLUSIVE));
            assertTrue(after.isPresent(), "the cancelled waiter must not have taken the lock");
            one.release(after.get());
        }
    }

    @Test
    void timedOutWaitLeavesNoLockTimeoutOnTheConnection() throws Exception {
        try (LockProvider a = LockProvider.open(uri)) {
            LockUri parsed = LockUri.parse(uri);
            try (SqlLockBackend other = JdbcLockBackendFactory.create(parsed, null);
                 LockHandle h = a.lock("timeout/local").acquire(Duration.ofSeconds(5))) {
                long start = System.nanoTime();
                assertTrue(other.awaitAcquire(request("timeout/local", LockMode.EXCLUSIVE), Duration.ofMillis(250)).isEmpty());
                long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertTrue(took >= 250 && took < 3000, "waited " + took + " ms for a 250 ms timeout");
                // the same (pooled) connection serves the status query: its lock_timeout is back to 0
                SqlSession s = otherSession(other);
                try (Statement st = s.connection.createStatement(); ResultSet rs = st.executeQuery("SHOW lock_timeout")) {
                    rs.next();
                    assertEquals("0", rs.getString(1), "a transaction-local lock_timeout must not outlive the wait");
                }
            }
        }
    }

    private static SqlSession otherSession(SqlLockBackend backend) throws Exception {
        var field = SqlLockBackend.class.getDeclaredField("pool");
        field.setAccessible(true);
        return ((SessionPool) field.get(backend)).borrow();
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
            LockStatus after = locks.status("status/other");
            assertEquals(LockStatus.State.FREE, after.state());
            assertEquals(holder.pid(), after.owner().orElseThrow().pid(), "the last holder stays on record");
        }
    }

    /** A monitoring role that may only read sees who holds a lock, and is refused, with the reason, when it locks. */
    @Test
    void aReadOnlyUserReadsStatusButCannotLock() throws Exception {
        try (LockProvider locks = LockProvider.open(uri); // the tables exist before the grant
             Connection c = pg.connect(database); Statement st = c.createStatement()) {
            st.execute("DO $$ BEGIN IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'watcher')"
                    + " THEN CREATE ROLE watcher LOGIN; END IF; END $$");
            st.execute("GRANT SELECT ON kanuki_locks, kanuki_locks_sessions TO watcher");
        }
        String readOnly = uri.replace("user=" + PostgresServer.USER, "user=watcher");
        try (HolderProcess holder = HolderProcess.start(uri, "watched/job", "exclusive", tempDir.resolve("watched.err"));
             LockProvider watcher = LockProvider.open(readOnly)) {
            LockStatus status = watcher.status("watched/job");
            assertEquals(LockStatus.State.HELD, status.state());
            assertEquals(holder.pid(), status.owner().orElseThrow().pid(), "the holder must be named to a reader");
            assertTrue(watcher.list().stream().anyMatch(l -> l.name().equals("watched/job") && l.isHeld()));
            var refused = assertThrows(dev.kanuki.LockBackendException.class, () -> watcher.lock("watched/other").tryAcquire());
            assertTrue(refused.getMessage().contains("permission denied"), refused.getMessage());
        }
    }

    @Test
    void providerOverAnApplicationsDataSource() throws Exception {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(pg.jdbcUrl(database));
        try (LockProvider locks = JdbcLocks.provider(ds, Dialect.POSTGRESQL, "table=app_locks&restartGrace=0");
             LockProvider byUri = LockProvider.open(uri + "&table=app_locks")) {
            try (LockHandle h = locks.lock("ds/job").acquire(Duration.ofSeconds(5))) {
                assertTrue(byUri.lock("ds/job").tryAcquire().isEmpty(), "the DataSource provider and the URI one share locks");
                assertEquals(LockStatus.State.HELD, byUri.status("ds/job").state());
                assertEquals(h.fencingToken(), byUri.status("ds/job").lastFencingToken());
                h.verify();
            }
        }
        try (Connection c = pg.connect(database); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT count(*) FROM app_locks")) {
            rs.next();
            assertEquals(1, rs.getInt(1), "the table option names the owner-record table");
        }
    }

    @Test
    void badUrisAreRejectedWithTheReason() throws Exception {
        String base = "postgresql://" + pg.host() + ":" + pg.port() + "/" + database;
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LockProvider.open(base + "?user=kanuki&colour=red"))
                .getMessage().contains("colour"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LockProvider.open(base + "?table=Robert';DROP"))
                .getMessage().contains("table="));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LockProvider.open("postgresql:/just/a/path"))
                .getMessage().contains("host"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> LockProvider.open("postgresql://" + pg.host() + ":" + pg.port() + "/?user=kanuki"))
                .getMessage().contains("database"));
        // user in the authority, password from a file (trust authentication ignores it)
        Path secret = Files.writeString(tempDir.resolve("pw"), "not-used\n");
        try (LockProvider p = LockProvider.open("postgresql://kanuki@" + pg.host() + ":" + pg.port() + "/" + database
                + "?passwordFile=" + secret + "&restartGrace=0&jdbc.tcpKeepAlive=true")) {
            p.lock("uri/forms").acquire(Duration.ofSeconds(5)).close();
        }
        var down = assertThrows(dev.kanuki.LockBackendException.class,
                () -> LockProvider.open("postgresql://127.0.0.1:1/" + database + "?user=kanuki&connectTimeout=2s"));
        assertTrue(down.getMessage().contains("127.0.0.1:1"), down.getMessage());
        assertFalse(down.hint().isEmpty());
    }

    /** The waiter sits in one statement blocked on the advisory lock until the holder leaves: no polling. */
    @Test
    void waitingIsWokenByTheServerNotByPolling() throws Exception {
        try (LockProvider locks = LockProvider.open(uri);
             HolderProcess holder = HolderProcess.start(uri, "wake/up", "exclusive", tempDir.resolve("h.err"))) {
            CompletableFuture<LockHandle> waiting = locks.lock("wake/up").acquireAsync(Duration.ofSeconds(30));
            Thread.sleep(300);
            String first = blockedWaiter();
            Thread.sleep(1000);
            assertEquals(first, blockedWaiter(), "the same statement must still be waiting (pid, query start)");
            long released = System.nanoTime();
            holder.close();
            try (LockHandle h = waiting.get(10, TimeUnit.SECONDS)) {
                assertTrue(h.fencingToken() > holder.token());
            }
            assertTrue(System.nanoTime() - released < TimeUnit.SECONDS.toNanos(5));
        }
    }

    /** @return pid and query start of the one session waiting for an advisory lock */
    private static String blockedWaiter() throws Exception {
        try (Connection c = pg.connect(database); Statement s = c.createStatement();
             ResultSet rs = s.executeQuery("SELECT pid, query_start FROM pg_stat_activity WHERE datname = current_database()"
                     + " AND wait_event_type = 'Lock' AND wait_event = 'advisory'")) {
            assertTrue(rs.next(), "no session is waiting for an advisory lock");
            String found = rs.getLong(1) + "@" + rs.getString(2);
            assertFalse(rs.next(), "more than one session waits");
            return found;
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
