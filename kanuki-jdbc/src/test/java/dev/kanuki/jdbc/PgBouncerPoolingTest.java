package dev.kanuki.jdbc;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.MissingServerException;
import dev.kanuki.testkit.PgBouncerServer;
import dev.kanuki.testkit.PgBouncerServer.PoolMode;
import dev.kanuki.testkit.PostgresServer;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLTransientConnectionException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.sql.DataSource;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * PostgreSQL behind a real PgBouncer: transaction and statement pooling lend a server session to
 * whichever client runs the next transaction, which breaks session advisory locks (two holders
 * at once, no {@code lost()}), so they are refused when the provider opens, through a URI and
 * through an application's DataSource alike; session pooling works (and passes the contract
 * suite: {@link PgBouncerSessionContractTest}). Skipped, with the package to install, where
 * {@code pgbouncer} is not installed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("servers")
class PgBouncerPoolingTest {
    private static PostgresServer pg;
    private static String database;
    private PgBouncerServer bouncer;

    @BeforeAll
    static void server() {
        pg = PostgresServer.shared();
        database = pg.createDatabase("bouncer");
    }

    @AfterEach
    void stopBouncer() {
        if (bouncer != null) {
            bouncer.close();
        }
    }

    /** Starts a PgBouncer in front of the shared server, or skips the test saying what to install. */
    static PgBouncerServer startOrSkip(PostgresServer backend, PoolMode mode, String... settings) {
        try {
            return PgBouncerServer.start(backend, mode, settings);
        } catch (MissingServerException e) {
            assumeTrue(false, e.getMessage());
            throw e; // not reached: the assumption aborts the test
        }
    }

    private String uri() {
        return bouncer.kanukiUri(database) + "&restartGrace=0";
    }

    private PGSimpleDataSource dataSource() {
        PGSimpleDataSource ds = new PGSimpleDataSource();
        ds.setUrl(bouncer.jdbcUrl(database));
        return ds;
    }

    /**
     * Without the check, both providers opened, and the second "took" the lock the first held:
     * its statement ran on the server session holding the advisory lock, and advisory locks are
     * reentrant per session.
     */
    private void holdTheSameLockTwice() {
        try (LockProvider byUri = LockProvider.open(uri());
             LockProvider byDataSource = JdbcLocks.provider(dataSource(), Dialect.POSTGRESQL, "restartGrace=0")) {
            Optional<LockHandle> first = byUri.lock("pooled/job").tryAcquire();
            Optional<LockHandle> second = byDataSource.lock("pooled/job").tryAcquire();
            fail("opened through PgBouncer pool_mode=" + bouncer.poolMode().configValue() + "; the first provider held the"
                    + " lock: " + first.isPresent() + ", the second held it at the same time: " + second.isPresent());
        }
    }

    private static void assertClearRefusal(LockBackendException refused) {
        String message = refused.getMessage();
        assertTrue(message.contains("not pinned to one PostgreSQL session"), message);
        assertTrue(message.contains("pool_mode=transaction"), message);
        assertTrue(message.contains("two holders at once"), message);
        assertTrue(refused.hint().contains("pool_mode=session") && refused.hint().contains("directly"), refused.hint());
    }

    @Test
    void transactionPoolingIsRefusedAtOpen() {
        bouncer = startOrSkip(pg, PoolMode.TRANSACTION);
        assertClearRefusal(assertThrows(LockBackendException.class, this::holdTheSameLockTwice));
    }

    @Test
    void statementPoolingIsRefusedAtOpen() {
        bouncer = startOrSkip(pg, PoolMode.STATEMENT);
        assertClearRefusal(assertThrows(LockBackendException.class, this::holdTheSameLockTwice));
    }

    @Test
    void transactionPoolingBehindADataSourceIsRefused() {
        bouncer = startOrSkip(pg, PoolMode.TRANSACTION);
        assertClearRefusal(assertThrows(LockBackendException.class,
                () -> JdbcLocks.provider(dataSource(), Dialect.POSTGRESQL, "restartGrace=0").close()));
    }

    /**
     * With a client held in an open transaction, PgBouncer must hand the next client another
     * server session: the refusal must not depend on the pooler being idle.
     */
    @Test
    void transactionPoolingIsRefusedWhileOtherClientsAreBusy() throws Exception {
        bouncer = startOrSkip(pg, PoolMode.TRANSACTION);
        try (Connection busy = bouncer.connect(database); Statement s = busy.createStatement()) {
            busy.setAutoCommit(false);
            s.execute("SELECT pg_backend_pid()"); // keeps one server session out of the pool until rollback
            assertClearRefusal(assertThrows(LockBackendException.class, () -> LockProvider.open(uri()).close()));
            busy.rollback();
        }
    }

    /**
     * A pool that hands out its idle server sessions in turn ({@code server_round_robin = 1})
     * rather than the last one back: with two idle sessions the second connection's first look
     * lands on the other one and this connection gets its own back, so only a later round with
     * more looks is caught; with three, this connection's next statement moves.
     */
    @ParameterizedTest(name = "{0} idle server sessions")
    @ValueSource(ints = {2, 3})
    void transactionPoolingHandingOutSessionsInTurnIsRefused(int idleSessions) throws Exception {
        bouncer = startOrSkip(pg, PoolMode.TRANSACTION, "server_round_robin = 1");
        List<Connection> clients = new ArrayList<>();
        try {
            for (int i = 0; i < idleSessions; i++) { // each holds a server session in a transaction at once: the pool grows
                Connection c = bouncer.connect(database);
                clients.add(c);
                c.setAutoCommit(false);
                try (Statement s = c.createStatement()) {
                    s.execute("SELECT pg_backend_pid()");
                }
            }
            for (Connection c : clients) {
                c.rollback();
            }
        } finally {
            for (Connection c : clients) {
                c.close();
            }
        }
        assertClearRefusal(assertThrows(LockBackendException.class, () -> LockProvider.open(uri()).close()));
    }

    /**
     * The check's second connection must not make an application's pool of one connection (which
     * cannot lend a second while kanuki holds the first) fail or hang at open: the provider opens
     * after a bounded wait, checked with one connection, and locks directly against PostgreSQL.
     */
    @Test
    void aDataSourceThatLendsOneConnectionAtATimeStillOpens() throws Exception {
        PGSimpleDataSource direct = new PGSimpleDataSource();
        direct.setUrl(pg.jdbcUrl(database));
        Semaphore lendable = new Semaphore(1);
        DataSource poolOfOne = (DataSource) Proxy.newProxyInstance(getClass().getClassLoader(),
                new Class<?>[] {DataSource.class}, (proxy, method, args) -> {
                    if (!method.getName().equals("getConnection")) {
                        return method.invoke(direct, args);
                    }
                    if (!lendable.tryAcquire(30, TimeUnit.SECONDS)) { // as HikariCP's connectionTimeout
                        throw new SQLTransientConnectionException("pool of one: none lent within 30 s");
                    }
                    return lentOnce(direct.getConnection(), lendable);
                });
        try (LockProvider locks = JdbcLocks.provider(poolOfOne, Dialect.POSTGRESQL, "restartGrace=0&maxIdle=0");
             LockHandle held = locks.lock("pool-of-one/job").acquire(Duration.ofSeconds(30))) {
            held.verify();
        }
    }

    /** @return the connection, giving its permit back once when it is closed or aborted */
    private static Connection lentOnce(Connection real, Semaphore lendable) {
        AtomicBoolean returned = new AtomicBoolean();
        return (Connection) Proxy.newProxyInstance(PgBouncerPoolingTest.class.getClassLoader(),
                new Class<?>[] {Connection.class}, (proxy, method, args) -> {
                    try {
                        return method.invoke(real, args);
                    } catch (InvocationTargetException e) {
                        throw e.getCause();
                    } finally {
                        if ((method.getName().equals("close") || method.getName().equals("abort"))
                                && returned.compareAndSet(false, true)) {
                            lendable.release();
                        }
                    }
                });
    }

    /**
     * Session pooling with one server session per pool: the check's second connection waits in
     * PgBouncer for the session the first one holds. The provider still opens (the look is
     * bounded, and the check goes on with one connection), and locks.
     */
    @Test
    void sessionPoolingWithAUsedUpPoolStillOpens() {
        bouncer = startOrSkip(pg, PoolMode.SESSION, "default_pool_size = 1");
        try (LockProvider locks = LockProvider.open(uri() + "&maxIdle=0");
             LockHandle held = locks.lock("one-session/job").acquire(Duration.ofSeconds(30))) {
            held.verify();
        }
    }

    /** Session pooling pins a server session per client: the provider opens, and two providers exclude each other. */
    @Test
    void sessionPoolingIsAccepted() {
        bouncer = startOrSkip(pg, PoolMode.SESSION);
        try (LockProvider byUri = LockProvider.open(uri());
             LockProvider byDataSource = JdbcLocks.provider(dataSource(), Dialect.POSTGRESQL, "restartGrace=0")) {
            try (LockHandle held = byUri.lock("session/job").acquire(Duration.ofSeconds(10))) {
                assertTrue(byDataSource.lock("session/job").tryAcquire().isEmpty(), "one holder at a time");
                held.verify();
            }
            assertTrue(byDataSource.lock("session/job").tryAcquire().map(h -> {
                h.close();
                return true;
            }).orElse(false), "free again after release");
        }
    }
}
