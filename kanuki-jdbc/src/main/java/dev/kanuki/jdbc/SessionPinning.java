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
 * <p>A second connection is opened for the check, after this connection's first statement (so
 * this one has its server session first), and closed after it. It is waited for at most
 * {@value #SECOND_CONNECTION_WAIT_SECONDS} s (an application's pool of one connection cannot lend
 * a second; a pooler in session mode with no server session left makes it wait), and each of its
 * looks at most {@value #LOOK_TIMEOUT_MILLIS} ms; without it only this connection's own looks are
 * made, which catch a busy pooler but not an idle one, and a warning says so.
 */
final class SessionPinning {
    private static final Logger log = LoggerFactory.getLogger(SessionPinning.class);
    /** Rounds of mark, looks by the second connection (1, 2, 3 ...), look by this one. */
    static final int ROUNDS = 3;
    static final int SECOND_CONNECTION_WAIT_SECONDS = 5;
    /** How long a look by the second connection may take (it may wait for a server session). */
    static final int LOOK_TIMEOUT_MILLIS = 10_000;

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

    private SessionPinning(SqlDialect dialect, ConnectionSource source, Probe probe) {
        this.dialect = dialect;
        this.source = source;
        this.probe = probe;
    }

    /**
     * @param dialect whose statements to use; a dialect without a {@link SqlDialect#pinProbe()} is not checked
     * @param source where the connections come from
     * @param first a connection from the source, left open and without a mark
     * @throws LockBackendException when the connections are found not pinned to one server session
     */
    static void requirePinned(SqlDialect dialect, ConnectionSource source, Connection first) {
        Probe probe = dialect.pinProbe();
        if (probe != null) {
            new SessionPinning(dialect, source, probe).check(first);
        }
    }

    private void check(Connection first) {
        String mark = Long.toHexString(ThreadLocalRandom.current().nextLong() | 1L << 63)
                + Long.toHexString(ThreadLocalRandom.current().nextLong() | 1L << 63);
        String setMark = String.format(probe.mark(), mark);
        Connection other = null;
        try {
            for (int round = 1; round <= ROUNDS; round++) {
                Seen marked = run(first, setMark);
                if (round == 1) {
                    // Only now: the first connection has its server session (a pooler in session
                    // mode with one session left would otherwise give it to the second and make
                    // the first wait), and an application's pool of one has lent it the connection.
                    other = openSecond();
                }
                for (int look = 0; look < round && other != null; look++) {
                    Seen seen = look(other);
                    if (seen == null) {
                        closeQuietly(other);
                        other = null;
                        break;
                    }
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

    /**
     * One look by the second connection, bounded: a pooler in session mode whose pool is used up
     * makes it wait for a server session that the first connection holds.
     *
     * @return what it saw, or null when it cannot look (the check goes on with the first alone)
     */
    private Seen look(Connection other) {
        try {
            other.setNetworkTimeout(Runnable::run, LOOK_TIMEOUT_MILLIS);
            return run(other, probe.read());
        } catch (SQLException e) {
            log.warn("the second connection to {} could not look for the pinning check's mark ({}); checked with one"
                    + " connection only, which does not catch an idle pooler in transaction mode", source.describe(),
                    e.getMessage());
            return null;
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

    /**
     * @return a second connection, or null when none can be had within a few seconds (the check
     *     then makes only the first connection's own looks, and says so)
     */
    private Connection openSecond() {
        // An application's pool may block (up to its own timeout, 30 s for HikariCP) when it has
        // nothing to lend, and a pooler may hold a login until it has a server session: ask from
        // another thread and give up after a few seconds.
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
        try {
            return opened.get(SECOND_CONNECTION_WAIT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException | InterruptedException e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            opened.thenAccept(SessionPinning::closeQuietly); // hand it back whenever it comes
            log.warn("{} gave no second connection within {} s to check that connections keep one server session;"
                    + " checked with one connection only, which does not catch an idle pooler in transaction mode",
                    source.describe(), SECOND_CONNECTION_WAIT_SECONDS);
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
