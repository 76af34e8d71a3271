package dev.kanuki.jdbc;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executor;

/**
 * One database connection as the lock backend uses it: the session that holds at most one lock
 * at a time (a dedicated connection per held lock), its prepared statements, and the server's
 * id for it ({@code pg_backend_pid()}, {@code CONNECTION_ID()}), which owner records store so
 * {@code status} can tell which session holds a lock.
 *
 * <p>Not thread-safe: one thread uses a session at a time.
 */
final class SqlSession {
    /** Runs {@code setNetworkTimeout}'s callbacks inline; the drivers need some executor. */
    private static final Executor DIRECT = Runnable::run;

    final Connection connection;
    final long serverId;
    private final Map<String, PreparedStatement> statements = new HashMap<>();
    private int networkTimeoutMillis = -1;
    /** Whether the session came from the idle pool (and so may have died while idle). */
    boolean reused;
    long idleSinceNanos;

    /** {@link System#nanoTime()} before which this session may not grant: see {@link SqlLockBackend}. */
    final long grantableAtNanos;

    SqlSession(Connection connection, long serverId, long grantableAtNanos) {
        this.connection = connection;
        this.serverId = serverId;
        this.grantableAtNanos = grantableAtNanos;
    }

    /** {@return how long until this session may grant a lock, 0 when it may} */
    long graceLeftNanos() {
        long left = grantableAtNanos - System.nanoTime();
        return Math.max(0, left);
    }

    /**
     * @param sql a statement
     * @return the prepared statement for it, prepared once per session
     */
    PreparedStatement prepare(String sql) throws SQLException {
        PreparedStatement ps = statements.get(sql);
        if (ps == null) {
            ps = connection.prepareStatement(sql);
            statements.put(sql, ps);
        }
        return ps;
    }

    /** Like {@link #prepare(String)}, asking the driver to return generated keys (MySQL's insert id). */
    PreparedStatement prepareReturningKeys(String sql) throws SQLException {
        String key = "\u0000keys\u0000" + sql;
        PreparedStatement ps = statements.get(key);
        if (ps == null) {
            ps = connection.prepareStatement(sql, Statement.RETURN_GENERATED_KEYS);
            statements.put(key, ps);
        }
        return ps;
    }

    /**
     * Bounds how long a statement may wait for the server's answer; the connection is broken
     * when it passes. Cheap: it sets the socket timeout, no round trip.
     *
     * @param millis the bound, 0 for none
     */
    void networkTimeout(int millis) throws SQLException {
        if (millis != networkTimeoutMillis) {
            connection.setNetworkTimeout(DIRECT, millis);
            networkTimeoutMillis = millis;
        }
    }

    /** {@return true when the connection can no longer be used} */
    boolean isBroken() {
        try {
            return connection.isClosed() || !connection.isValid(2);
        } catch (SQLException e) {
            return true;
        }
    }

    /**
     * @param e a failure of a statement on this session
     * @return true when it says the connection itself failed (as opposed to the statement)
     */
    boolean failedConnection(SQLException e) {
        String state = e.getSQLState();
        if (state != null && (state.startsWith("08") || state.startsWith("57P"))) {
            return true; // connection exception; admin shutdown, crash shutdown, cannot connect now
        }
        if (e instanceof java.sql.SQLNonTransientConnectionException || e instanceof java.sql.SQLTransientConnectionException
                || e instanceof java.sql.SQLRecoverableException) {
            return true;
        }
        return isBroken();
    }

    /** Closes the connection; for a pooled DataSource it goes back to the application's pool. */
    void close() {
        try {
            connection.close();
        } catch (SQLException e) {
            // nothing more to free
        }
    }

    /**
     * Ends the connection for good, so the server frees every lock it holds. A pooling
     * DataSource's {@code close()} would only lend it out again, locks and all.
     */
    void abort() {
        try {
            connection.abort(DIRECT);
        } catch (SQLException | RuntimeException e) {
            close();
        }
    }
}
