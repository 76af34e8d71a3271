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
import java.util.OptionalLong;

/**
 * PostgreSQL: session-level advisory locks in their two-{@code int} form.
 *
 * <ul>
 *   <li>try: {@code pg_try_advisory_lock} alone, the same statement a program would run by
 *       hand; shared mode {@code pg_try_advisory_lock_shared}.</li>
 *   <li>wait: {@code pg_advisory_lock} under a transaction-local {@code lock_timeout}, sent as
 *       one batch: the server wakes the waiter. The local setting reverts at the end of the
 *       batch, so nothing leaks into a connection pool.</li>
 *   <li>fencing token, on demand: an {@code INSERT ... ON CONFLICT DO UPDATE} of the name's row
 *       to token + 1, which writes only if {@code pg_locks} shows this session holding the key.
 *       A reader reads the last writer's token the same way under its shared lock.</li>
 *   <li>owners: each session registers its process (host, pid) once, keyed by
 *       {@code pg_backend_pid()}; {@code status} joins {@code pg_locks} with those
 *       registrations.</li>
 * </ul>
 *
 * <p>The lock-record table is a normal (logged) table: a token is committed before it is
 * handed out, so with {@code synchronous_commit = on} (the default) no crash of the server can
 * issue the same token twice.
 */
final class PostgresDialect extends SqlDialect {
    private static final String LOCK_TIMEOUT = "55P03";
    private static final String QUERY_CANCELED = "57014";
    /** insufficient_privilege, read_only_sql_transaction (a standby, a read-only default). */
    private static final java.util.Set<String> READ_ONLY = java.util.Set.of("42501", "25006");
    /** The server clock in microseconds since the epoch: where a new row's tokens start. */
    private static final String CLOCK_MICROS = "floor(extract(epoch from clock_timestamp()) * 1000000)::bigint";
    private static final String THIS_DATABASE = "database = (SELECT oid FROM pg_database WHERE datname = current_database())";
    private static final String PG_LOCKS = "FROM pg_locks WHERE locktype = 'advisory' AND " + THIS_DATABASE
            + " AND classid = ?::int8::oid AND objid = ?::int8::oid AND objsubid = 2";

    private final String sessionInfo;
    private final String registerSession;
    private final String registerName;
    private final String issueExclusive;
    private final String issueShared;
    private final String tryExclusiveAndIssue;
    private final String awaitExclusiveAndIssue;
    private final String tryShared;
    private final String awaitSharedAndRead;
    private final String awaitExclusive;
    private final String awaitShared;
    private final String holds;
    private final String status;
    private final String list;
    private final String prune;

    PostgresDialect(String table) {
        super(table);
        String sessions = sessionsTable();
        this.sessionInfo = "SELECT pg_backend_pid(),"
                + " (EXTRACT(EPOCH FROM clock_timestamp() - pg_postmaster_start_time()) * 1000)::bigint";
        this.registerSession = "INSERT INTO " + sessions + " AS s (pid, owner_host, owner_pid, owner_id, since_ms)"
                + " VALUES (pg_backend_pid(), ?, ?, ?, ?) ON CONFLICT (pid) DO UPDATE SET owner_host = excluded.owner_host,"
                + " owner_pid = excluded.owner_pid, owner_id = excluded.owner_id, since_ms = excluded.since_ms; "
                + sessionInfo;
        // parameters: id, name, key, then key and id for the names sharing the key
        this.registerName = "INSERT INTO " + table + " AS t (id, name, lock_key, token) VALUES (?, ?, ?, 0)"
                + " ON CONFLICT (id) DO UPDATE SET lock_key = excluded.lock_key WHERE t.lock_key <> excluded.lock_key;"
                + " SELECT string_agg(c.name, E'\\n') FROM " + table + " c WHERE c.lock_key = ? AND c.id <> ?";
        String heldHere = "EXISTS (SELECT 1 " + PG_LOCKS + " AND pid = pg_backend_pid() AND granted AND mode = ?)";
        // A row's first token is the server clock in microseconds, then it counts up by one: so a
        // row removed by prune (only once the clock passed its last token by the margin) and made
        // again starts above every token it issued. A row registered without a token has 0.
        String nextToken = "CASE WHEN t.token = 0 THEN excluded.token ELSE t.token + 1 END";
        // parameters: id, name, key, host, pid, owner id, acquired-at, then the held check's high, low, mode
        this.issueExclusive = "INSERT INTO " + table + " AS t (id, name, lock_key, token, holder_pid, owner_host,"
                + " owner_pid, owner_id, acquired_at_ms) SELECT ?, ?, ?, " + CLOCK_MICROS + ", pg_backend_pid(), ?, ?, ?, ? WHERE "
                + heldHere + " ON CONFLICT (id) DO UPDATE SET token = " + nextToken + ", lock_key = excluded.lock_key,"
                + " holder_pid = excluded.holder_pid, owner_host = excluded.owner_host, owner_pid = excluded.owner_pid,"
                + " owner_id = excluded.owner_id, acquired_at_ms = excluded.acquired_at_ms"
                + " RETURNING t.token";
        this.issueShared = "SELECT " + heldHere + ", (SELECT token FROM " + table + " WHERE id = ?)";
        String local = "SELECT set_config('lock_timeout', ?, true), set_config('statement_timeout', '0', true); ";
        this.awaitExclusive = local + "SELECT pg_advisory_lock(?, ?)";
        this.awaitShared = local + "SELECT pg_advisory_lock_shared(?, ?)";
        // The eager forms: the write is gated by the lock function in the same statement or batch.
        String upsert = "INSERT INTO " + table + " AS t (id, name, lock_key, token, holder_pid, owner_host, owner_pid,"
                + " owner_id, acquired_at_ms) %s ON CONFLICT (id) DO UPDATE SET token = " + nextToken + ","
                + " lock_key = excluded.lock_key, holder_pid = excluded.holder_pid, owner_host = excluded.owner_host,"
                + " owner_pid = excluded.owner_pid, owner_id = excluded.owner_id, acquired_at_ms = excluded.acquired_at_ms"
                + " RETURNING t.token";
        // parameters: high, low, then id, name, key, host, pid, owner id, acquired-at
        this.tryExclusiveAndIssue = "WITH l AS MATERIALIZED (SELECT pg_try_advisory_lock(?, ?) AS got), w AS ("
                + String.format(upsert, "SELECT ?, ?, ?, " + CLOCK_MICROS + ", pg_backend_pid(), ?, ?, ?, ? FROM l WHERE l.got")
                + ") SELECT l.got, (SELECT token FROM w) FROM l";
        // parameters: lock timeout, high, low, then as above (a failed lock aborts the batch before the write)
        this.awaitExclusiveAndIssue = awaitExclusive + "; "
                + String.format(upsert, "VALUES (?, ?, ?, " + CLOCK_MICROS + ", pg_backend_pid(), ?, ?, ?, ?)");
        String readToken = "SELECT token FROM " + table + " WHERE id = ?";
        this.tryShared = "SELECT pg_try_advisory_lock_shared(?, ?); " + readToken;
        this.awaitSharedAndRead = awaitShared + "; " + readToken;
        this.holds = "SELECT " + heldHere;
        this.status = "SELECT l.mode, l.pid, s.owner_host, s.owner_pid, s.owner_id FROM pg_locks l LEFT JOIN " + sessions
                + " s ON s.pid = l.pid WHERE l.locktype = 'advisory' AND l." + THIS_DATABASE
                + " AND l.classid = ?::int8::oid AND l.objid = ?::int8::oid AND l.objsubid = 2 AND l.granted"
                + " ORDER BY l.mode; "
                + "SELECT token, owner_host, owner_pid, owner_id, acquired_at_ms FROM " + table + " WHERE id = ?";
        this.list = "WITH held AS (SELECT (classid::int8 << 32) | objid::int8 AS k, mode, pid FROM pg_locks"
                + " WHERE locktype = 'advisory' AND objsubid = 2 AND granted AND " + THIS_DATABASE + ")"
                + " SELECT t.id, t.name, t.token, t.owner_host, t.owner_pid, t.owner_id, t.acquired_at_ms, x.pid AS holder,"
                + " s.owner_host AS holder_host, s.owner_pid AS holder_pid, s.owner_id AS holder_id,"
                + " (SELECT count(*) FROM held h WHERE h.k = t.lock_key AND h.mode = 'ShareLock') AS shared_holders"
                + " FROM " + table + " t"
                + " LEFT JOIN LATERAL (SELECT h.pid FROM held h WHERE h.k = t.lock_key AND h.mode = 'ExclusiveLock' LIMIT 1) x"
                + " ON true LEFT JOIN " + sessions + " s ON s.pid = x.pid ORDER BY t.name";
        // parameters: the id to start after, the margin in µs, how many rows. Each candidate's key
        // is taken with a transaction-level try-lock, which excludes every session-level holder
        // (exclusive or shared) until this statement commits; so a row goes only while nobody
        // holds its lock, and a taker that comes after finds no row and starts at the clock.
        String stale = "token < " + CLOCK_MICROS + " - ?";
        this.prune = "WITH c AS MATERIALIZED (SELECT id, lock_key FROM " + table + " WHERE id > ? AND " + stale
                + " ORDER BY id LIMIT ?),"
                + " l AS MATERIALIZED (SELECT id FROM c WHERE pg_try_advisory_xact_lock((lock_key >> 32)::int,"
                + " lock_key::bit(32)::int)),"
                + " gone AS (DELETE FROM " + table + " t USING l WHERE t.id = l.id RETURNING t.name)"
                + " SELECT (SELECT max(id) FROM c), (SELECT array_agg(name) FROM gone)";
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

    /**
     * A custom setting as the mark: session-level unless set in a transaction, visible to
     * whatever runs on the same server session next, and it takes no lock.
     */
    @Override
    SessionPinning.Probe pinProbe() {
        return new SessionPinning.Probe("SELECT set_config('kanuki.pin_check', '%s', false), pg_backend_pid()",
                "SELECT current_setting('kanuki.pin_check', true), pg_backend_pid()",
                "SELECT set_config('kanuki.pin_check', '', false), pg_backend_pid()");
    }

    @Override
    String prepareSchema(Connection c) throws SQLException {
        c.setAutoCommit(true);
        String database;
        boolean exists;
        try (PreparedStatement ps = c.prepareStatement("SELECT current_database(),"
                + " to_regclass(?) IS NOT NULL AND to_regclass(?) IS NOT NULL")) {
            ps.setString(1, table);
            ps.setString(2, sessionsTable());
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
                s.execute("CREATE TABLE IF NOT EXISTS " + sessionsTable() + " (pid integer PRIMARY KEY,"
                        + " owner_host text NOT NULL, owner_pid bigint NOT NULL, owner_id text NOT NULL, since_ms bigint)");
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
    SessionInfo prepareSession(Connection c, OwnerInfo owner) throws SQLException {
        if (!c.getAutoCommit()) {
            c.setAutoCommit(true);
        }
        List<Object[]> rows;
        try (PreparedStatement ps = c.prepareStatement(registerSession)) {
            setOwner(ps, 1, owner);
            rows = executeAll(ps, 1);
        } catch (SQLException e) {
            if (!READ_ONLY.contains(String.valueOf(e.getSQLState()))) {
                throw e;
            }
            unregistered(e);
            try (PreparedStatement ps = c.prepareStatement(sessionInfo)) {
                rows = executeAll(ps, 1);
            }
        }
        return new SessionInfo(((Number) rows.get(0)[0]).longValue(), ((Number) rows.get(0)[1]).longValue());
    }

    @Override
    String registerName(SqlSession s, LockKey key) throws SQLException {
        PreparedStatement ps = s.prepare(registerName);
        ps.setString(1, key.recordId());
        ps.setString(2, key.name());
        ps.setLong(3, key.key());
        ps.setLong(4, key.key());
        ps.setString(5, key.recordId());
        Object[] others = executeAll(ps, 1).get(0);
        return others == null ? null : (String) others[0];
    }

    @Override
    boolean lock(SqlSession s, LockKey key, LockMode mode, long waitNanos) throws SQLException, InterruptedException {
        boolean shared = mode == LockMode.SHARED;
        if (waitNanos <= 0) {
            PreparedStatement ps = s.prepare(shared ? "SELECT pg_try_advisory_lock_shared(?, ?)"
                    : "SELECT pg_try_advisory_lock(?, ?)");
            setKey(ps, 1, key);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }
        long millis = waitMillis(waitNanos);
        PreparedStatement ps = s.prepare(shared ? awaitShared : awaitExclusive);
        ps.setString(1, Long.toString(Math.min(millis, Integer.MAX_VALUE)));
        setKey(ps, 2, key);
        return executeWaiting(s, ps, millis, 2) != null;
    }

    @Override
    OptionalLong lockAndIssue(SqlSession s, LockKey key, LockMode mode, OwnerInfo owner, long waitNanos)
            throws SQLException, InterruptedException {
        boolean shared = mode == LockMode.SHARED;
        if (waitNanos <= 0) {
            if (shared) {
                PreparedStatement ps = s.prepare(tryShared);
                setKey(ps, 1, key);
                ps.setString(3, key.recordId());
                List<Object[]> rows = executeAll(ps, 2);
                return (Boolean) rows.get(0)[0] ? OptionalLong.of(tokenOf(rows.get(1))) : OptionalLong.empty();
            }
            PreparedStatement ps = s.prepare(tryExclusiveAndIssue);
            setKey(ps, 1, key);
            setRecord(ps, 3, key, owner);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1) ? OptionalLong.of(rs.getLong(2)) : OptionalLong.empty();
            }
        }
        long millis = waitMillis(waitNanos);
        PreparedStatement ps = s.prepare(shared ? awaitSharedAndRead : awaitExclusiveAndIssue);
        ps.setString(1, Long.toString(Math.min(millis, Integer.MAX_VALUE)));
        setKey(ps, 2, key);
        if (shared) {
            ps.setString(4, key.recordId());
        } else {
            setRecord(ps, 4, key, owner);
        }
        List<Object[]> rows = executeWaiting(s, ps, millis, 3);
        return rows == null ? OptionalLong.empty() : OptionalLong.of(tokenOf(rows.get(2)));
    }

    @Override
    OptionalLong issueToken(SqlSession s, LockKey key, LockMode mode, OwnerInfo owner) throws SQLException {
        if (mode == LockMode.SHARED) {
            PreparedStatement ps = s.prepare(issueShared);
            setHeld(ps, 1, key, "ShareLock");
            ps.setString(4, key.recordId());
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1) ? OptionalLong.of(rs.getLong(2)) : OptionalLong.empty();
            }
        }
        PreparedStatement ps = s.prepare(issueExclusive);
        setRecord(ps, 1, key, owner);
        setHeld(ps, 8, key, "ExclusiveLock");
        try (ResultSet rs = ps.executeQuery()) {
            return rs.next() ? OptionalLong.of(rs.getLong(1)) : OptionalLong.empty();
        }
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
        PreparedStatement ps = s.prepare(awaitExclusive);
        ps.setString(1, Long.toString(Math.min(millis, Integer.MAX_VALUE)));
        setKey(ps, 2, permit);
        return executeWaiting(s, ps, millis, 2) != null;
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
        setHeld(ps, 1, key, mode == LockMode.SHARED ? "ShareLock" : "ExclusiveLock");
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getBoolean(1);
        }
    }

    /**
     * Who holds the key, from {@code pg_locks} joined with the session registrations, and the
     * name's last token. With a hash collision the key may be held under another name: it is
     * then held for this name too, and the holder shown is the real one.
     */
    @Override
    LockStatus status(SqlSession s, LockKey key) throws SQLException {
        PreparedStatement ps = s.prepare(status);
        ps.setLong(1, Integer.toUnsignedLong(key.keyHigh()));
        ps.setLong(2, Integer.toUnsignedLong(key.keyLow()));
        ps.setString(3, key.recordId());
        boolean isResult = ps.execute();
        boolean exclusive = false;
        OwnerInfo holder = null;
        int sharedHolders = 0;
        long token = -1;
        OwnerInfo lastTokenOwner = null;
        int index = 0;
        while (true) {
            if (isResult) {
                try (ResultSet rs = ps.getResultSet()) {
                    while (rs.next()) {
                        if (index == 0) {
                            if ("ExclusiveLock".equals(rs.getString("mode"))) {
                                exclusive = true;
                                holder = owner(rs, "owner_", null);
                            } else {
                                sharedHolders++;
                            }
                        } else {
                            token = rs.getLong("token");
                            lastTokenOwner = owner(rs, "owner_", "acquired_at_ms");
                        }
                    }
                }
                index++;
            } else if (ps.getUpdateCount() == -1) {
                break;
            }
            isResult = ps.getMoreResults();
        }
        if (exclusive) {
            return new LockStatus(key.name(), LockStatus.State.HELD, Optional.ofNullable(holder), token);
        }
        if (sharedHolders > 0) {
            return new LockStatus(key.name(), LockStatus.State.HELD_SHARED, Optional.empty(), token);
        }
        return new LockStatus(key.name(), LockStatus.State.FREE, Optional.ofNullable(lastTokenOwner), token);
    }

    @Override
    List<Row> listRows(SqlSession s) throws SQLException {
        PreparedStatement ps = s.prepare(list);
        List<Row> rows = new ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                boolean held = isHeld(rs);
                rows.add(new Row(rs.getString("id"), rs.getString("name"), rs.getLong("token"),
                        owner(rs, "owner_", "acquired_at_ms"), held, held ? owner(rs, "holder_", null) : null,
                        rs.getInt("shared_holders")));
            }
        }
        return rows;
    }

    @Override
    PruneBatch pruneBatch(SqlSession s, String afterId, int limit, long marginMicros) throws SQLException {
        PreparedStatement ps = s.prepare(prune);
        ps.setString(1, afterId);
        ps.setLong(2, marginMicros);
        ps.setInt(3, limit);
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            String last = rs.getString(1);
            List<String> removed = new ArrayList<>();
            java.sql.Array names = rs.getArray(2);
            if (names != null) {
                for (Object name : (Object[]) names.getArray()) {
                    removed.add((String) name);
                }
                names.free();
            }
            return new PruneBatch(last, removed);
        }
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

    /** Sets the seven parameters of a record write (id, name, key, owner), from {@code first}. */
    private static void setRecord(PreparedStatement ps, int first, LockKey key, OwnerInfo owner) throws SQLException {
        ps.setString(first, key.recordId());
        ps.setString(first + 1, key.name());
        ps.setLong(first + 2, key.key());
        setOwner(ps, first + 3, owner);
    }

    private static long tokenOf(Object[] row) {
        return row == null || row[0] == null ? 0 : ((Number) row[0]).longValue();
    }

    /** Sets the three parameters of a "held by this session" check, from {@code first}. */
    private static void setHeld(PreparedStatement ps, int first, LockKey key, String mode) throws SQLException {
        ps.setLong(first, Integer.toUnsignedLong(key.keyHigh()));
        ps.setLong(first + 1, Integer.toUnsignedLong(key.keyLow()));
        ps.setString(first + 2, mode);
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
