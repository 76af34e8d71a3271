package dev.kanuki.jdbc;

import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.jdbc.LockKeys.LockKey;
import dev.kanuki.spi.LockMode;
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The statements of one database's lock functions. {@link SqlLockBackend} runs the algorithm
 * (one dedicated connection per held lock, retries on a dead idle connection, cancelling a wait,
 * collision reports); a dialect only says how to lock, unlock, check and describe a key in one
 * or two round trips.
 *
 * <p>Every method runs on a session the caller owns. When a method throws, the caller discards
 * the session (aborting it), so a lock the statement may have taken before failing is freed by
 * the server; a method therefore never needs to clean up after itself.
 */
abstract class SqlDialect {
    /** Table names: a lower-case SQL identifier, optionally schema-qualified. */
    static final Pattern TABLE_NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}(\\.[a-z_][a-z0-9_]{0,62})?");

    /** The owner-record table. */
    final String table;

    SqlDialect(String table) {
        if (!TABLE_NAME.matcher(table).matches()) {
            throw new IllegalArgumentException("table=" + table + ": use a lower-case SQL identifier such as kanuki_locks"
                    + " (optionally schema.table)");
        }
        this.table = table;
    }

    /**
     * What an acquisition returned.
     *
     * @param token the fencing token
     * @param otherNamesOnKey other names whose records share this lock's key (a hash
     *     collision), newline-separated, or null
     */
    record Acquired(long token, String otherNamesOnKey) {
    }

    /**
     * What {@link #status} found.
     *
     * @param status the status to report
     * @param heldUnder when the lock is held under another name sharing its key, that name
     */
    record Status(LockStatus status, String heldUnder) {
    }

    /**
     * Thrown when a wait ended without a lock but left the session unfit for reuse (a kill sent
     * at the deadline could still arrive): the caller discards the session and reports "not
     * acquired", not a failure.
     */
    static final class SpoiledSession extends SQLException {
        private static final long serialVersionUID = 1L;

        SpoiledSession(String message, Throwable cause) {
            super(message, "HY008", cause);
        }
    }

    /** @return the product's name for messages, e.g. {@code PostgreSQL} */
    abstract String product();

    /** @return whether shared (read) locks exist */
    abstract boolean sharedLocks();

    /** @return whether two names can map to one server lock (PostgreSQL's 64-bit keys) */
    abstract boolean keysCanCollide();

    /**
     * Creates the owner-record table (and anything else) when missing.
     *
     * @param c a connection
     * @return the name of the connection's current database
     */
    abstract String prepareSchema(Connection c) throws SQLException;

    /**
     * What a new session learnt about itself.
     *
     * @param serverId the server's id for the session ({@code pg_backend_pid()}, {@code CONNECTION_ID()})
     * @param uptimeMillis how long the server has been up
     */
    record SessionInfo(long serverId, long uptimeMillis) {
    }

    /**
     * Readies a new connection: autocommit on, nothing else that would outlive it in a pool.
     *
     * @return the server's id for this session and the server's uptime
     */
    abstract SessionInfo prepareSession(Connection c) throws SQLException;

    /**
     * Tries ({@code waitNanos == 0}) or waits in the server for a lock, and on success writes the
     * owner record and the next fencing token (exclusive), or reads the last exclusive holder's
     * token (shared), in the same round trip.
     *
     * @return what was acquired, or null when the lock is held elsewhere / the wait timed out
     * @throws InterruptedException when the calling thread was interrupted and the wait cancelled
     */
    abstract Acquired lock(SqlSession s, LockKey key, LockMode mode, OwnerInfo owner, long waitNanos)
            throws SQLException, InterruptedException;

    /**
     * One attempt at each permit in turn, in one round trip.
     *
     * @return the index of the permit taken, or -1
     */
    abstract int tryPermits(SqlSession s, List<LockKey> permits) throws SQLException;

    /**
     * Waits in the server for one permit.
     *
     * @return true when it was taken
     */
    abstract boolean awaitPermit(SqlSession s, LockKey permit, long waitNanos) throws SQLException, InterruptedException;

    /** @return the next fencing token of a permit just taken, with its owner record */
    abstract long issuePermitToken(SqlSession s, LockKey permit, OwnerInfo owner) throws SQLException;

    /** @return false when the session did not hold the lock (it was lost) */
    abstract boolean unlock(SqlSession s, LockKey key, LockMode mode) throws SQLException;

    /** @return true while this session holds the lock */
    abstract boolean holds(SqlSession s, LockKey key, LockMode mode) throws SQLException;

    /** @return who holds the lock, by the server's lock table and the owner records */
    abstract Status status(SqlSession s, LockKey key) throws SQLException;

    /**
     * One row of the owner-record table with what the server's lock table says about its key.
     *
     * @param id the record id (digest of namespace and name)
     * @param name the lock (or semaphore) name
     * @param lockKey PostgreSQL's advisory key, 0 for MySQL
     * @param token the last fencing token
     * @param holderSession the server id of the session that wrote the record
     * @param owner the owner written with it
     * @param acquiredAtMs when it was written
     * @param exclusiveHolder the server id of the session holding the key exclusively, or -1
     * @param sharedHolders how many sessions hold the key shared
     */
    record Row(String id, String name, long lockKey, long token, long holderSession, OwnerInfo owner,
               long acquiredAtMs, long exclusiveHolder, int sharedHolders) {
    }

    /** @return every owner record with its key's holders, in one round trip */
    abstract List<Row> listRows(SqlSession s) throws SQLException;

    /** @return the server ids of the sessions holding the key now (any mode) */
    abstract List<Long> holderSessions(SqlSession s, LockKey key) throws SQLException;

    /**
     * Ends another session on the server ({@code pg_terminate_backend}, {@code KILL CONNECTION}),
     * which frees every lock it holds.
     *
     * @return false when the server refused or the session was gone
     */
    abstract boolean endSession(SqlSession s, long serverId) throws SQLException;

    // ---------------------------------------------------------------- helpers for dialects

    /** @return the wait in whole milliseconds, at least 1 (0 would mean "forever" to PostgreSQL) */
    static long waitMillis(long waitNanos) {
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos + 999_999));
    }

    /** @return the wait in seconds with millisecond precision, for {@code GET_LOCK} */
    static BigDecimal waitSeconds(long waitNanos) {
        return BigDecimal.valueOf(Math.min(waitMillis(waitNanos), 366L * 24 * 3600 * 1000), 3);
    }

    /** Bounds a waiting statement's socket read a little beyond the server-side timeout. */
    static int networkTimeoutFor(long waitMillis) {
        long bound = waitMillis + 30_000;
        return bound > Integer.MAX_VALUE ? 0 : (int) bound;
    }

    /** @return the owner of a record row, or null when it has none */
    static OwnerInfo owner(ResultSet rs, String host, String pid, String id, String acquiredAt) throws SQLException {
        String h = rs.getString(host);
        String i = rs.getString(id);
        if (h == null || i == null) {
            return null;
        }
        return new OwnerInfo(h, rs.getLong(pid), i, Instant.ofEpochMilli(rs.getLong(acquiredAt)), null);
    }

    static void setOwner(PreparedStatement ps, int first, OwnerInfo owner) throws SQLException {
        ps.setString(first, owner.host());
        ps.setLong(first + 1, owner.pid());
        ps.setString(first + 2, owner.id());
        ps.setLong(first + 3, owner.acquiredAt().toEpochMilli());
    }
}
