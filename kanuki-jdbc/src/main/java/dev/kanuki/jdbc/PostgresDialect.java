package dev.kanuki.jdbc;

import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.jdbc.LockKeys.LockKey;
import dev.kanuki.spi.LockMode;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * PostgreSQL: session-level advisory locks in their two-{@code int} form.
 *
 * <ul>
 *   <li>try: one statement, {@code pg_try_advisory_lock} in a CTE whose success gates an
 *       {@code INSERT ... ON CONFLICT DO UPDATE} of the owner record with the next token.</li>
 *   <li>wait: {@code pg_advisory_lock} under a transaction-local {@code lock_timeout}, and the
 *       same record write, sent as one batch: the server wakes the waiter and writes the record
 *       without another round trip. The local setting reverts at the end of the batch, so
 *       nothing leaks into a connection pool.</li>
 *   <li>shared: {@code pg_advisory_lock_shared}; a reader reads the last writer's token in a
 *       second statement of the same batch, so it sees the token of a writer that released just
 *       before (each statement takes a fresh snapshot).</li>
 *   <li>check and status: {@code pg_locks}, matched against {@code pg_backend_pid()} and the
 *       owner records' {@code holder_pid}.</li>
 * </ul>
 *
 * <p>The owner-record table is a normal (logged) table: the token is committed before the lock
 * is handed out, so with {@code synchronous_commit = on} (the default) no crash of the server
 * can issue the same token twice.
 */
final class PostgresDialect extends SqlDialect {
    private static final String LOCK_TIMEOUT = "55P03";
    private static final String QUERY_CANCELED = "57014";
    private static final String PG_LOCKS = "FROM pg_locks WHERE locktype = 'advisory'"
            + " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            + " AND classid = ?::int8::oid AND objid = ?::int8::oid AND objsubid = 2";

    private final String write;
    private final String tryExclusive;
    private final String awaitExclusive;
    private final String tryShared;
    private final String awaitShared;
    private final String awaitPermit;
    private final String holds;
    private final String status;
    private final String list;

    PostgresDialect(String table) {
        super(table);
        String upsert = "INSERT INTO " + table + " AS t (id, name, lock_key, token, holder_pid, owner_host, owner_pid,"
                + " owner_id, acquired_at_ms) %s"
                + " ON CONFLICT (id) DO UPDATE SET token = t.token + 1, lock_key = excluded.lock_key,"
                + " holder_pid = excluded.holder_pid, owner_host = excluded.owner_host, owner_pid = excluded.owner_pid,"
                + " owner_id = excluded.owner_id, acquired_at_ms = excluded.acquired_at_ms"
                + " RETURNING t.token";
        String others = "(SELECT string_agg(c.name, E'\\n') FROM " + table + " c WHERE c.lock_key = ? AND c.id <> ?)";
        // parameters: id, name, key, host, pid, owner id, acquired-at, key, id
        this.write = String.format(upsert, "VALUES (?, ?, ?, 1, pg_backend_pid(), ?, ?, ?, ?)") + ", " + others;
        // parameters: high, low, then as write
        this.tryExclusive = "WITH l AS MATERIALIZED (SELECT pg_try_advisory_lock(?, ?) AS got),"
                + " w AS (" + String.format(upsert, "SELECT ?, ?, ?, 1, pg_backend_pid(), ?, ?, ?, ? FROM l WHERE l.got") + ")"
                + " SELECT l.got, (SELECT token FROM w), " + others + " FROM l";
        String local = "SELECT set_config('lock_timeout', ?, true), set_config('statement_timeout', '0', true); ";
        this.awaitExclusive = local + "SELECT pg_advisory_lock(?, ?); " + write;
        String readToken = "SELECT token FROM " + table + " WHERE id = ?";
        this.tryShared = "SELECT pg_try_advisory_lock_shared(?, ?); " + readToken;
        this.awaitShared = local + "SELECT pg_advisory_lock_shared(?, ?); " + readToken;
        this.awaitPermit = local + "SELECT pg_advisory_lock(?, ?)";
        this.holds = "SELECT EXISTS (SELECT 1 " + PG_LOCKS + " AND pid = pg_backend_pid() AND granted AND mode = ?)";
        this.list = "WITH held AS (SELECT (classid::int8 << 32) | objid::int8 AS k, mode, pid FROM pg_locks"
                + " WHERE locktype = 'advisory' AND objsubid = 2 AND granted"
                + " AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))"
                + " SELECT t.id, t.name, t.lock_key, t.token, t.holder_pid, t.owner_host, t.owner_pid, t.owner_id,"
                + " t.acquired_at_ms,"
                + " (SELECT h.pid FROM held h WHERE h.k = t.lock_key AND h.mode = 'ExclusiveLock' LIMIT 1) AS exclusive_pid,"
                + " (SELECT count(*) FROM held h WHERE h.k = t.lock_key AND h.mode = 'ShareLock') AS shared_holders"
                + " FROM " + table + " t ORDER BY t.name";
        this.status = "SELECT mode, pid " + PG_LOCKS + " AND granted; "
                + "SELECT id, name, token, holder_pid, owner_host, owner_pid, owner_id, acquired_at_ms FROM " + table
                + " WHERE id = ? OR lock_key = ?";
    }

    @Override
    String product() {
        return "PostgreSQL";
    }

    @Override
    boolean keysCanCollide() {
        return true;
    }

    @Override
    boolean sharedLocks() {
        return true;
    }

    @Override
    String prepareSchema(Connection c) throws SQLException {
        c.setAutoCommit(true);
        String database;
        boolean exists;
        try (PreparedStatement ps = c.prepareStatement("SELECT current_database(), to_regclass(?) IS NOT NULL")) {
            ps.setString(1, table);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                database = rs.getString(1);
                exists = rs.getBoolean(2);
            }
        }
        if (!exists) {
            String index = table.substring(table.indexOf('.') + 1) + "_lock_key";
            c.setAutoCommit(false);
            try (Statement s = c.createStatement()) {
                // Serialize creators: concurrent CREATE TABLE IF NOT EXISTS can still fail on pg_type.
                s.execute("SELECT pg_advisory_xact_lock(7022934541226431545)");
                s.execute("CREATE TABLE IF NOT EXISTS " + table + " (id text PRIMARY KEY, name text NOT NULL,"
                        + " lock_key bigint NOT NULL, token bigint NOT NULL, holder_pid integer, owner_host text,"
                        + " owner_pid bigint, owner_id text, acquired_at_ms bigint)");
                s.execute("CREATE INDEX IF NOT EXISTS " + index + " ON " + table + " (lock_key)");
                c.commit();
            } catch (SQLException e) {
                c.rollback();
                throw e;
            } finally {
                c.setAutoCommit(true);
            }
        }
        return database;
    }

    @Override
    SessionInfo prepareSession(Connection c) throws SQLException {
        if (!c.getAutoCommit()) {
            c.setAutoCommit(true);
        }
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT pg_backend_pid(),"
                + " (EXTRACT(EPOCH FROM clock_timestamp() - pg_postmaster_start_time()) * 1000)::bigint")) {
            rs.next();
            return new SessionInfo(rs.getLong(1), rs.getLong(2));
        }
    }

    @Override
    Acquired lock(SqlSession s, LockKey key, LockMode mode, OwnerInfo owner, long waitNanos)
            throws SQLException, InterruptedException {
        boolean shared = mode == LockMode.SHARED;
        if (waitNanos <= 0) {
            if (shared) {
                PreparedStatement ps = s.prepare(tryShared);
                setKey(ps, 1, key);
                ps.setString(3, key.recordId());
                List<Object[]> rows = executeAll(ps, 2);
                if (!(Boolean) rows.get(0)[0]) {
                    return null;
                }
                return new Acquired(tokenOf(rows.get(1)), null);
            }
            PreparedStatement ps = s.prepare(tryExclusive);
            setKey(ps, 1, key);
            setWrite(ps, 3, key, owner);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    return null;
                }
                return new Acquired(rs.getLong(2), rs.getString(3));
            }
        }
        long millis = waitMillis(waitNanos);
        PreparedStatement ps = s.prepare(shared ? awaitShared : awaitExclusive);
        ps.setString(1, Long.toString(Math.min(millis, Integer.MAX_VALUE)));
        setKey(ps, 2, key);
        if (shared) {
            ps.setString(4, key.recordId());
        } else {
            setWrite(ps, 4, key, owner);
        }
        List<Object[]> rows = executeWaiting(s, ps, millis, 3);
        if (rows == null) {
            return null;
        }
        Object[] last = rows.get(2);
        return shared ? new Acquired(tokenOf(last), null)
                : new Acquired(((Number) last[0]).longValue(), (String) last[1]);
    }

    @Override
    int tryPermits(SqlSession s, List<LockKey> permits) throws SQLException {
        StringBuilder sql = new StringBuilder("SELECT CASE");
        for (int i = 0; i < permits.size(); i++) {
            sql.append(" WHEN pg_try_advisory_lock(?, ?) THEN ").append(i); // CASE stops at the first success
        }
        sql.append(" ELSE -1 END");
        PreparedStatement ps = s.prepare(sql.toString());
        for (int i = 0; i < permits.size(); i++) {
            setKey(ps, 1 + 2 * i, permits.get(i));
        }
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Override
    boolean awaitPermit(SqlSession s, LockKey permit, long waitNanos) throws SQLException, InterruptedException {
        long millis = waitMillis(waitNanos);
        PreparedStatement ps = s.prepare(awaitPermit);
        ps.setString(1, Long.toString(Math.min(millis, Integer.MAX_VALUE)));
        setKey(ps, 2, permit);
        return executeWaiting(s, ps, millis, 2) != null;
    }

    @Override
    long issuePermitToken(SqlSession s, LockKey permit, OwnerInfo owner) throws SQLException {
        PreparedStatement ps = s.prepare(write);
        setWrite(ps, 1, permit, owner);
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getLong(1);
        }
    }

    @Override
    boolean unlock(SqlSession s, LockKey key, LockMode mode) throws SQLException {
        PreparedStatement ps = s.prepare(mode == LockMode.SHARED ? "SELECT pg_advisory_unlock_shared(?, ?)"
                : "SELECT pg_advisory_unlock(?, ?)");
        setKey(ps, 1, key);
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getBoolean(1);
        }
    }

    @Override
    boolean holds(SqlSession s, LockKey key, LockMode mode) throws SQLException {
        PreparedStatement ps = s.prepare(holds);
        ps.setLong(1, Integer.toUnsignedLong(key.keyHigh()));
        ps.setLong(2, Integer.toUnsignedLong(key.keyLow()));
        ps.setString(3, mode == LockMode.SHARED ? "ShareLock" : "ExclusiveLock");
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getBoolean(1);
        }
    }

    /**
     * Reads who holds the key from {@code pg_locks} and matches the holder's backend pid with the
     * owner records of every name on that key. When the holder's record is another name's, two
     * names collided on one key: the lock is reported held (it is, for this name too) with the
     * other name's owner, and the backend logs the collision.
     */
    @Override
    Status status(SqlSession s, LockKey key) throws SQLException {
        PreparedStatement ps = s.prepare(status);
        ps.setLong(1, Integer.toUnsignedLong(key.keyHigh()));
        ps.setLong(2, Integer.toUnsignedLong(key.keyLow()));
        ps.setString(3, key.recordId());
        ps.setLong(4, key.key());
        boolean isResult = ps.execute();
        long exclusivePid = -1;
        int sharedHolders = 0;
        List<Row> rows = new ArrayList<>();
        int index = 0;
        while (true) {
            if (isResult) {
                try (ResultSet rs = ps.getResultSet()) {
                    while (rs.next()) {
                        if (index == 0) {
                            if ("ExclusiveLock".equals(rs.getString(1))) {
                                exclusivePid = rs.getLong(2);
                            } else {
                                sharedHolders++;
                            }
                        } else {
                            rows.add(new Row(rs.getString("id"), rs.getString("name"), rs.getLong("token"),
                                    rs.getLong("holder_pid"), owner(rs, "owner_host", "owner_pid", "owner_id", "acquired_at_ms"),
                                    rs.getLong("acquired_at_ms")));
                        }
                    }
                }
                index++;
            } else if (ps.getUpdateCount() == -1) {
                break;
            }
            isResult = ps.getMoreResults();
        }
        Row mine = rows.stream().filter(r -> r.id.equals(key.recordId())).findFirst().orElse(null);
        long token = mine == null ? -1 : mine.token;
        if (exclusivePid >= 0) {
            long pid = exclusivePid;
            // The holder's record is the newest one that names its session (a pooled session
            // can appear in older records of other names on the same key).
            Row holder = rows.stream().filter(r -> r.holderPid == pid)
                    .max((a, b) -> Long.compare(a.acquiredAtMs, b.acquiredAtMs)).orElse(null);
            return new Status(new LockStatus(key.name(), LockStatus.State.HELD,
                    Optional.ofNullable(holder == null ? null : holder.owner), token),
                    holder != null && holder != mine ? holder.name : null);
        }
        if (sharedHolders > 0) {
            return new Status(new LockStatus(key.name(), LockStatus.State.HELD_SHARED, Optional.empty(), token), null);
        }
        return new Status(new LockStatus(key.name(), LockStatus.State.FREE,
                Optional.ofNullable(mine == null ? null : mine.owner), token), null);
    }

    private record Row(String id, String name, long token, long holderPid, OwnerInfo owner, long acquiredAtMs) {
    }

    @Override
    List<SqlDialect.Row> listRows(SqlSession s) throws SQLException {
        PreparedStatement ps = s.prepare(list);
        List<SqlDialect.Row> rows = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                long exclusive = rs.getLong("exclusive_pid");
                if (rs.wasNull()) {
                    exclusive = -1;
                }
                rows.add(new SqlDialect.Row(rs.getString("id"), rs.getString("name"), rs.getLong("lock_key"),
                        rs.getLong("token"), rs.getLong("holder_pid"),
                        owner(rs, "owner_host", "owner_pid", "owner_id", "acquired_at_ms"), rs.getLong("acquired_at_ms"),
                        exclusive, rs.getInt("shared_holders")));
            }
        }
        return rows;
    }

    @Override
    List<Long> holderSessions(SqlSession s, LockKey key) throws SQLException {
        PreparedStatement ps = s.prepare("SELECT pid " + PG_LOCKS + " AND granted");
        ps.setLong(1, Integer.toUnsignedLong(key.keyHigh()));
        ps.setLong(2, Integer.toUnsignedLong(key.keyLow()));
        List<Long> pids = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                pids.add(rs.getLong(1));
            }
        }
        return pids;
    }

    @Override
    boolean endSession(SqlSession s, long serverId) throws SQLException {
        PreparedStatement ps = s.prepare("SELECT pg_terminate_backend(?)");
        ps.setInt(1, (int) serverId);
        try (ResultSet rs = ps.executeQuery()) {
            return rs.next() && rs.getBoolean(1);
        }
    }

    // ---------------------------------------------------------------- helpers

    private static void setKey(PreparedStatement ps, int first, LockKey key) throws SQLException {
        ps.setInt(first, key.keyHigh());
        ps.setInt(first + 1, key.keyLow());
    }

    /** Sets the nine parameters of the record write, from {@code first}. */
    private static void setWrite(PreparedStatement ps, int first, LockKey key, OwnerInfo owner) throws SQLException {
        ps.setString(first, key.recordId());
        ps.setString(first + 1, key.name());
        ps.setLong(first + 2, key.key());
        setOwner(ps, first + 3, owner);
        ps.setLong(first + 7, key.key());
        ps.setString(first + 8, key.recordId());
    }

    private static long tokenOf(Object[] row) {
        return row == null || row[0] == null ? 0 : ((Number) row[0]).longValue();
    }

    /**
     * Runs a batch that blocks in the server, cancellable by interrupting this thread.
     *
     * @return the first row of each statement, or null when the server's lock timeout ended it
     */
    private static List<Object[]> executeWaiting(SqlSession s, PreparedStatement ps, long millis, int statements)
            throws SQLException, InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for a PostgreSQL advisory lock");
        }
        s.networkTimeout(networkTimeoutFor(millis));
        List<Object[]> rows = null;
        SQLException failure = null;
        CancelOnInterrupt.Watch watch = CancelOnInterrupt.watch(ps, Long.MAX_VALUE);
        try {
            rows = executeAll(ps, statements);
        } catch (SQLException e) {
            failure = e;
        } finally {
            watch.close();
        }
        if (watch.cancelled()) {
            Thread.interrupted();
            throw new InterruptedException("the wait for a PostgreSQL advisory lock was cancelled");
        }
        s.networkTimeout(SqlLockBackend.STATEMENT_TIMEOUT_MILLIS);
        if (failure != null) {
            if (LOCK_TIMEOUT.equals(failure.getSQLState())) {
                return null;
            }
            if (QUERY_CANCELED.equals(failure.getSQLState())) {
                throw new SQLException("a PostgreSQL advisory lock wait was cancelled by someone else (" + failure.getMessage()
                        + ")", failure.getSQLState(), failure);
            }
            throw failure;
        }
        return rows;
    }

    /** Executes a batch of {@code statements} queries and returns the first row of each (null when none). */
    private static List<Object[]> executeAll(PreparedStatement ps, int statements) throws SQLException {
        List<Object[]> rows = new ArrayList<>(statements);
        boolean isResult = ps.execute();
        while (true) {
            if (isResult) {
                try (ResultSet rs = ps.getResultSet()) {
                    if (rs.next()) {
                        int n = rs.getMetaData().getColumnCount();
                        Object[] row = new Object[n];
                        for (int i = 0; i < n; i++) {
                            row[i] = rs.getObject(i + 1);
                        }
                        rows.add(row);
                    } else {
                        rows.add(null);
                    }
                }
            } else if (ps.getUpdateCount() == -1) {
                break;
            }
            isResult = ps.getMoreResults();
        }
        if (rows.size() != statements) {
            throw new SQLException("expected " + statements + " results from PostgreSQL, got " + rows.size());
        }
        return rows;
    }
}
