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
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
import org.slf4j.LoggerFactory;

/**
 * The statements of one database's lock functions. {@link SqlLockBackend} runs the algorithm
 * (one dedicated connection per held lock, retries on a dead idle connection, cancelling a wait,
 * collision reports, tokens on demand); a dialect only says how to lock, unlock, check, issue a
 * token and describe a key, each in one round trip.
 *
 * <p>Every method runs on a session the caller owns. When a method throws, the caller discards
 * the session (aborting it), so a lock the statement may have taken before failing is freed by
 * the server; a method therefore never needs to clean up after itself.
 */
abstract class SqlDialect {
    /**
     * Table names: a lower-case SQL identifier, optionally schema-qualified, short enough that
     * {@code _sessions} can be appended within the servers' 63-character limit.
     */
    static final Pattern TABLE_NAME = Pattern.compile("([a-z_][a-z0-9_]{0,62}\\.)?[a-z_][a-z0-9_]{0,53}");

    /** The lock-record table: one row per name, with its last fencing token. */
    final String table;

    SqlDialect(String table) {
        if (!TABLE_NAME.matcher(table).matches()) {
            throw new IllegalArgumentException("table=" + table + ": use a lower-case SQL identifier of at most 54 characters"
                    + " such as kanuki_locks"
                    + " (optionally schema.table)");
        }
        this.table = table;
    }

    /** {@return the table of session registrations: who (host, pid) each connection works for} */
    String sessionsTable() {
        return table + "_sessions";
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

    /** {@return the product's name for messages, e.g. {@code PostgreSQL}} */
    abstract String product();

    /** {@return whether shared (read) locks exist} */
    abstract boolean sharedLocks();

    /** {@return whether two names can map to one server lock (PostgreSQL's 64-bit keys)} */
    abstract boolean keysCanCollide();

    /**
     * Creates the lock-record and session tables when missing.
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
     * Readies a new connection (autocommit on, nothing else that would outlive it in a pool) and
     * registers it in the sessions table under {@code owner}, so that {@code status} can name the
     * process behind any session that holds a lock without a write per acquisition.
     *
     * @return the server's id for this session and the server's uptime
     */
    abstract SessionInfo prepareSession(Connection c, OwnerInfo owner) throws SQLException;

    /**
     * Makes sure the name has its row in the lock-record table (token 0 when new), so that
     * {@code list()} can name a held lock. Done once per name and backend, not per acquisition.
     *
     * @return other names whose rows share this name's server key (a hash collision),
     *     newline-separated, or null
     */
    abstract String registerName(SqlSession s, LockKey key) throws SQLException;

    /**
     * Tries ({@code waitNanos == 0}) or waits in the server for a lock: the bare lock function,
     * nothing written.
     *
     * @return true when the lock was taken, false when it is held elsewhere / the wait timed out
     * @throws InterruptedException when the calling thread was interrupted and the wait cancelled
     */
    abstract boolean lock(SqlSession s, LockKey key, LockMode mode, long waitNanos)
            throws SQLException, InterruptedException;

    /**
     * Like {@link #lock}, and on success issues the fencing token in the same round trip (for
     * names whose holders ask for tokens): the write is gated by the lock function's result in
     * the same statement or batch, so it happens only when the lock was taken.
     *
     * @return the token, or empty when the lock is held elsewhere / the wait timed out
     * @throws InterruptedException when the calling thread was interrupted and the wait cancelled
     */
    abstract OptionalLong lockAndIssue(SqlSession s, LockKey key, LockMode mode, OwnerInfo owner, long waitNanos)
            throws SQLException, InterruptedException;

    /**
     * Issues the fencing token of a lock this session holds: for an exclusive lock or a permit,
     * the row's token + 1 with the owner, committed, in a statement that only writes while the
     * session still holds the lock; for a shared lock, the last exclusive token, read while the
     * shared lock is held.
     *
     * @return the token, or empty when the session no longer holds the lock
     */
    abstract OptionalLong issueToken(SqlSession s, LockKey key, LockMode mode, OwnerInfo owner) throws SQLException;

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

    /** {@return false when the session did not hold the lock (it was lost)} */
    abstract boolean unlock(SqlSession s, LockKey key, LockMode mode) throws SQLException;

    /** {@return true while this session holds the lock} */
    abstract boolean holds(SqlSession s, LockKey key, LockMode mode) throws SQLException;

    /** {@return who holds the lock, by the server's lock table and the session registrations} */
    abstract LockStatus status(SqlSession s, LockKey key) throws SQLException;

    /**
     * One row of the lock-record table with what the server's lock table says about its key.
     *
     * @param id the record id (digest of namespace and name)
     * @param name the lock (or semaphore) name
     * @param token the last fencing token issued, 0 when none was
     * @param lastTokenOwner who took the last token, or null
     * @param held whether some session holds the key exclusively
     * @param holder the registered owner of the session holding it exclusively, or null
     * @param sharedHolders how many sessions hold the key shared
     */
    record Row(String id, String name, long token, OwnerInfo lastTokenOwner, boolean held, OwnerInfo holder,
               int sharedHolders) {
    }

    /** {@return every lock record with its key's holders, in one round trip} */
    abstract List<Row> listRows(SqlSession s) throws SQLException;

    /**
     * One batch of {@code prune}: of the rows after {@code afterId} (in id order), deletes those
     * whose last token the server clock has passed by more than the margin, each while prune holds
     * the row's lock (a row whose lock is held, shared or waited for stays). Safe because every
     * row starts its tokens at the server clock in microseconds: a row made again later starts
     * above every token the deleted one issued, unless the clock stepped back by more than the
     * margin.
     *
     * @param afterId the last id of the previous batch ("" for the first)
     * @param limit how many rows to look at
     * @param marginMicros how far the clock must have passed a row's last token
     * @return the names of the rows removed, and the last id looked at (null when there were none)
     */
    abstract PruneBatch pruneBatch(SqlSession s, String afterId, int limit, long marginMicros) throws SQLException;

    /**
     * @param lastId the last id looked at, or null when there was none: the table was done
     * @param removed the names whose rows were removed
     */
    record PruneBatch(String lastId, List<String> removed) {
    }

    /** {@return the server ids of the sessions holding the key now (any mode)} */
    abstract List<Long> holderSessions(SqlSession s, LockKey key) throws SQLException;

    /**
     * Ends another session on the server ({@code pg_terminate_backend}, {@code KILL CONNECTION}),
     * which frees every lock it holds.
     *
     * @return false when the server refused or the session was gone
     */
    abstract boolean endSession(SqlSession s, long serverId) throws SQLException;

    /**
     * The statements that check that a client connection keeps one server session (see
     * {@link SessionPinning}); null when this dialect is not checked.
     *
     * @return the probe, or null
     */
    SessionPinning.Probe pinProbe() {
        return null;
    }

    // ---------------------------------------------------------------- helpers for dialects

    private final AtomicBoolean unregisteredLogged = new AtomicBoolean();

    /**
     * A user that may only read (a monitoring role, a read-only replica) cannot register its
     * sessions: it can still read {@code status} and {@code list}, but not lock (locking writes
     * the name's row). Said once, at debug level: a status reader is expected to be read-only.
     */
    void unregistered(SQLException e) {
        if (unregisteredLogged.compareAndSet(false, true)) {
            LoggerFactory.getLogger(SqlDialect.class).debug("cannot register sessions in {} ({}): this user can read"
                    + " status but not lock; grant it INSERT and UPDATE on {} and {} to lock", sessionsTable(),
                    e.getMessage(), table, sessionsTable());
        }
    }


    /** {@return the wait in whole milliseconds, at least 1 (0 would mean "forever" to PostgreSQL)} */
    static long waitMillis(long waitNanos) {
        return Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos + 999_999));
    }

    /** {@return the wait in seconds with millisecond precision, for {@code GET_LOCK}} */
    static BigDecimal waitSeconds(long waitNanos) {
        return BigDecimal.valueOf(Math.min(waitMillis(waitNanos), 366L * 24 * 3600 * 1000), 3);
    }

    /**
     * Bounds a waiting statement's socket read a little beyond the server-side timeout: a server
     * that stops answering fails the wait about when the caller's deadline passes.
     */
    static int networkTimeoutFor(long waitMillis) {
        long bound = waitMillis + SqlLockBackend.ACQUIRE_SLACK_MILLIS;
        return bound > Integer.MAX_VALUE ? 0 : (int) bound;
    }

    /**
     * @return the owner in columns {@code prefix + host/pid/id} of a row, with {@code acquiredAt}
     *     (a column name, or null for none), or null when the row has none
     */
    static OwnerInfo owner(ResultSet rs, String prefix, String acquiredAt) throws SQLException {
        String h = rs.getString(prefix + "host");
        String i = rs.getString(prefix + "id");
        if (h == null || i == null) {
            return null;
        }
        Instant at = null;
        if (acquiredAt != null) {
            long ms = rs.getLong(acquiredAt);
            at = rs.wasNull() ? null : Instant.ofEpochMilli(ms);
        }
        return new OwnerInfo(h, rs.getLong(prefix + "pid"), i, at, null);
    }

    /** {@return whether the row's {@code holder} column (a session id) is set: someone holds the lock} */
    static boolean isHeld(ResultSet rs) throws SQLException {
        rs.getLong("holder");
        return !rs.wasNull();
    }

    /** Sets host, pid, id and acquired-at (millis, 0 when unknown) from {@code first}. */
    static void setOwner(PreparedStatement ps, int first, OwnerInfo owner) throws SQLException {
        ps.setString(first, owner.host());
        ps.setLong(first + 1, owner.pid());
        ps.setString(first + 2, owner.id());
        ps.setLong(first + 3, owner.acquiredAt() == null ? System.currentTimeMillis() : owner.acquiredAt().toEpochMilli());
    }
}
