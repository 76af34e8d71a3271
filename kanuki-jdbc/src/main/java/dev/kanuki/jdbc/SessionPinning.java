package dev.kanuki.jdbc;

import dev.kanuki.LockBackendException;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Refuses connections that are not pinned to one server session, before anything is locked.
 *
 * <p><b>The hazard.</b> A session lock (a PostgreSQL advisory lock) belongs to the server
 * session that took it. A pooler in transaction or statement mode (PgBouncer
 * {@code pool_mode=transaction} or {@code statement}) hands a server session to whichever client
 * runs the next transaction: the lock stays on a server session that other clients are then
 * served by (and advisory locks are reentrant per session, so one of them "takes" the held lock a
 * second time), while the holder's checks and unlock run on other sessions. Two holders at once,
 * and no {@code lost()}. {@code SHOW pool_mode} only works on PgBouncer's admin console, so the
 * pooling is detected by its effect instead.
 *
 * <p><b>The check</b>, once per backend when it opens (the hot path never pays for it): this
 * connection leaves a random session-level mark (a setting) in one statement; a second
 * connection then looks for that mark in its own statement(s), and this connection looks for it
 * again in its next statement. Each statement runs in its own transaction (autocommit). With a
 * session pinned per connection, the second connection never sees the mark and this one always
 * does. A pooler in transaction mode shows itself either way: the second connection is served
 * by the session that has the mark (PgBouncer reuses the session released last), or this
 * connection's next statement runs on a session without it. The rounds repeat with more looks
 * by the second connection, so that a pool handing out its sessions in turn is caught too.
 *
 * <p>A second connection is opened for the check (on a thread of its own, while the first is
 * being opened) and closed after it. From an application's DataSource it is waited for at most
 * {@value #SECOND_CONNECTION_WAIT_SECONDS} s (a pool of one connection cannot lend a second);
 * without it only this connection's own looks are made, which catch a busy pooler but not an
 * idle one, and a warning says so.
 */
final class SessionPinning {
    private static final Logger log = LoggerFactory.getLogger(SessionPinning.class);
    /** Rounds of mark, looks by the second connection (1, 2, 3 ...), look by this one. */
    static final int ROUNDS = 3;
    static final int SECOND_CONNECTION_WAIT_SECONDS = 5;

    /**
     * What a dialect runs for the check. Each statement answers one row: the mark (or null, or
     * an empty string when there is none) and the server's id for the session that ran it.
     *
     * @param mark the statement that sets {@code %s} as this session's mark
     * @param read the statement that reads the mark of the session that runs it
     * @param clear the statement that leaves no mark behind
     */
    record Probe(String mark, String read, String clear) {
    }

    private record Seen(String mark, long serverId) {
    }

    private final SqlDialect dialect;
    private final ConnectionSource source;
    private final Probe probe;
    /** The second connection, being opened on its own thread; null when the dialect is not checked. */
    private final CompletableFuture<Connection> second;

    private SessionPinning(SqlDialect dialect, ConnectionSource source) {
        this.dialect = dialect;
        this.source = source;
        this.probe = dialect.pinProbe();
        this.second = probe == null ? null : openSecond(source);
    }

    /**
     * Starts the check: the second connection is opened on a thread of its own while the caller
     * opens the first, so the check costs its statements, not another connection set-up.
     *
     * @param dialect whose statements to use; a dialect without a {@link SqlDialect#pinProbe()} is not checked
     * @param source where the connections come from
     * @return the check, to finish with {@link #requirePinned} or {@link #abandon}
     */
    static SessionPinning start(SqlDialect dialect, ConnectionSource source) {
        return new SessionPinning(dialect, source);
    }

    /** The first connection could not be had: the second is closed whenever it comes. */
    void abandon() {
        if (second != null) {
            second.thenAccept(SessionPinning::closeQuietly);
        }
    }

    /**
     * @param first a connection from the source, left open and without a mark
     * @throws LockBackendException when the connections are found not pinned to one server session
     */
    void requirePinned(Connection first) {
        if (probe == null) {
            return;
        }
        String mark = Long.toHexString(ThreadLocalRandom.current().nextLong() | 1L << 63)
                + Long.toHexString(ThreadLocalRandom.current().nextLong() | 1L << 63);
        String setMark = String.format(probe.mark(), mark);
        Connection other = awaitSecond();
        try {
            for (int round = 1; round <= ROUNDS; round++) {
                Seen marked = run(first, setMark);
                for (int look = 0; look < round && other != null; look++) {
                    Seen seen = run(other, probe.read());
                    if (mark.equals(seen.mark())) {
                        throw refused("another connection's statement was served by the server session (id "
                                + seen.serverId() + ") this connection had just used, and saw the setting it had made there");
                    }
                }
                Seen again = run(first, probe.read());
                if (!mark.equals(again.mark()) || again.serverId() != marked.serverId()) {
                    throw refused("this connection's next statement was served by another server session (id "
                            + marked.serverId() + ", then " + again.serverId() + "), without the setting made a moment before");
                }
            }
        } catch (SQLException e) {
            throw new LockBackendException("cannot check that connections to " + source.describe()
                    + " keep one server session: " + e.getMessage(),
                    "check that the server is up; a connection pooler in statement mode refuses some statements", e);
        } finally {
            closeQuietly(other);
        }
        try {
            run(first, probe.clear()); // nothing left set on a connection an application's pool lends again
        } catch (SQLException e) {
            log.debug("cannot clear the pinning check's setting on {}", source.describe(), e);
        }
    }

    private static Seen run(Connection c, String sql) throws SQLException {
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery(sql)) {
            if (!rs.next()) {
                throw new SQLException("no row from " + sql);
            }
            return new Seen(rs.getString(1), rs.getLong(2));
        }
    }

    private LockBackendException refused(String evidence) {
        return new LockBackendException("connections to " + source.describe() + " are not pinned to one "
                + dialect.product() + " session: " + evidence + ". A connection pooler in transaction or statement mode"
                + " (PgBouncer pool_mode=transaction or statement) does this, and it breaks session locks: a lock stays on"
                + " the server session it was taken on, which the pooler then lends to other clients (who can take the"
                + " same lock again: two holders at once), while its holder's checks and unlock run elsewhere. Refused",
                "lock through a pool in pool_mode=session (a separate PgBouncer database entry for kanuki is enough)"
                        + " or connect kanuki directly to " + dialect.product() + "; see docs/backends/sql.md, Behind PgBouncer",
                null);
    }

    private static CompletableFuture<Connection> openSecond(ConnectionSource source) {
        CompletableFuture<Connection> opened = new CompletableFuture<>();
        Thread opener = new Thread(() -> {
            try {
                opened.complete(source.open());
            } catch (Throwable e) {
                opened.completeExceptionally(e);
            }
        }, "kanuki-pinning-check");
        opener.setDaemon(true);
        opener.start();
        return opened;
    }

    /**
     * @return the second connection, or null when none can be had (the check then makes only
     *     the first connection's own looks, and says so)
     */
    private Connection awaitSecond() {
        // An application's pool may block (up to its own timeout, 30 s for HikariCP) when it has
        // nothing to lend; the driver's own connect timeout bounds a URI's connection.
        int waitSeconds = source.isDataSource() ? SECOND_CONNECTION_WAIT_SECONDS : 60;
        try {
            return second.get(waitSeconds, TimeUnit.SECONDS);
        } catch (TimeoutException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            abandon();
            log.warn("{} gave no second connection within {} s to check that connections keep one server session;"
                    + " checked with one connection only, which does not catch an idle pooler in transaction mode",
                    source.describe(), waitSeconds);
            return null;
        } catch (ExecutionException e) {
            log.warn("{} gave no second connection to check that connections keep one server session ({});"
                    + " checked with one connection only, which does not catch an idle pooler in transaction mode",
                    source.describe(), String.valueOf(e.getCause()));
            return null;
        }
    }

    private static void closeQuietly(Connection c) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (SQLException e) {
            // nothing more to free
        }
    }
}
