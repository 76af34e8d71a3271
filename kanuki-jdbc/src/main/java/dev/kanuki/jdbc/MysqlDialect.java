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
import java.sql.Statement;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * MySQL and MariaDB: user-level locks, {@code GET_LOCK(name, timeout)} /
 * {@code RELEASE_LOCK(name)}, which belong to the session and end with it.
 *
 * <ul>
 *   <li>try and wait: {@code SELECT GET_LOCK(?, ?)} alone, the statement a program would run
 *       by hand. Waiting happens inside {@code GET_LOCK}, woken by the server.</li>
 *   <li>fencing token, on demand: {@code INSERT ... SELECT ... FROM DUAL WHERE IS_USED_LOCK(?) =
 *       CONNECTION_ID() ON DUPLICATE KEY UPDATE token = LAST_INSERT_ID(token + 1)}: written only
 *       while this session holds the lock, and the new token comes back in the OK packet's
 *       insert id, one round trip.</li>
 *   <li>owners: each session registers its process (host, pid) once, keyed by
 *       {@code CONNECTION_ID()}; {@code status} looks up the holder {@code IS_USED_LOCK} names.</li>
 *   <li>no shared locks: {@code GET_LOCK} is exclusive only.</li>
 * </ul>
 *
 * <p>MariaDB honours fractional timeouts; MySQL truncates them to whole seconds, so there the
 * wait is rounded up and {@link CancelOnInterrupt} kills it ({@code KILL QUERY}) at the real
 * deadline. Lock names are server-wide and at most 64 characters: see {@link LockKeys}.
 */
final class MysqlDialect extends SqlDialect {
    private final String registerSession;
    private final String registerName;
    private final String issue;
    private final String lockAndIssue;
    private final String status;
    private final String list;
    /** The server clock in microseconds since the epoch (whole seconds): where a new row's tokens start. */
    private static final String CLOCK_MICROS = "UNIX_TIMESTAMP() * 1000000";
    private volatile boolean fractionalTimeouts = true;

    MysqlDialect(String table) {
        super(table);
        String sessions = sessionsTable();
        this.registerSession = "INSERT INTO " + sessions + " (conn_id, owner_host, owner_pid, owner_id, since_ms)"
                + " VALUES (CONNECTION_ID(), ?, ?, ?, ?) ON DUPLICATE KEY UPDATE owner_host = VALUES(owner_host),"
                + " owner_pid = VALUES(owner_pid), owner_id = VALUES(owner_id), since_ms = VALUES(since_ms)";
        this.registerName = "INSERT INTO " + table + " (id, name, lock_name, token) VALUES (?, ?, ?, 0)"
                + " ON DUPLICATE KEY UPDATE id = id";
        // parameters: id, name, lock name, host, pid, owner id, acquired-at, then IS_USED_LOCK's name.
        // A row's first token is the server clock in microseconds, then it counts up by one: so a
        // row removed by prune (only once the clock passed its last token by the margin) and made
        // again starts above every token it issued. A row registered without a token has 0.
        String write = "INSERT INTO " + table + " (id, name, lock_name, token, holder_conn, owner_host, owner_pid, owner_id,"
                + " acquired_at_ms) SELECT ?, ?, ?, LAST_INSERT_ID(" + CLOCK_MICROS + "), CONNECTION_ID(), ?, ?, ?, ?"
                + " FROM DUAL WHERE %s"
                + " ON DUPLICATE KEY UPDATE token = LAST_INSERT_ID(IF(token = 0, VALUES(token), token + 1)), lock_name = VALUES(lock_name),"
                + " holder_conn = VALUES(holder_conn), owner_host = VALUES(owner_host), owner_pid = VALUES(owner_pid),"
                + " owner_id = VALUES(owner_id), acquired_at_ms = VALUES(acquired_at_ms)";
        this.issue = String.format(write, "IS_USED_LOCK(?) = CONNECTION_ID()");
        // the eager form: the row is written only when GET_LOCK took the lock, in the same statement
        this.lockAndIssue = String.format(write, "GET_LOCK(?, ?) = 1");
        this.status = "SELECT h.holder, s.owner_host AS holder_host, s.owner_pid AS holder_pid, s.owner_id AS holder_id,"
                + " t.token, t.owner_host, t.owner_pid, t.owner_id, t.acquired_at_ms"
                + " FROM (SELECT IS_USED_LOCK(?) AS holder) h LEFT JOIN " + sessions + " s ON s.conn_id = h.holder"
                + " LEFT JOIN " + table + " t ON t.id = ?";
        this.list = "SELECT t.id, t.name, t.token, t.owner_host, t.owner_pid, t.owner_id, t.acquired_at_ms, h.holder,"
                + " s.owner_host AS holder_host, s.owner_pid AS holder_pid, s.owner_id AS holder_id"
                + " FROM (SELECT id, IS_USED_LOCK(lock_name) AS holder FROM " + table + ") h JOIN " + table
                + " t ON t.id = h.id LEFT JOIN " + sessions + " s ON s.conn_id = h.holder ORDER BY t.name";
    }

    @Override
    String product() {
        return "MySQL/MariaDB";
    }

    @Override
    boolean keysCanCollide() {
        return false;
    }

    @Override
    boolean sharedLocks() {
        return false;
    }

    @Override
    String prepareSchema(Connection c) throws SQLException {
        c.setAutoCommit(true);
        String database;
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT DATABASE(), VERSION()")) {
            rs.next();
            database = rs.getString(1);
            fractionalTimeouts = String.valueOf(rs.getString(2)).contains("MariaDB");
        }
        if (database == null) {
            throw new SQLException("the connection has no current database; name one in the URI (mysql://host/DB)");
        }
        if (tablesExist(c, database)) {
            return database; // CREATE TABLE IF NOT EXISTS would still need the CREATE privilege
        }
        try (Statement s = c.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS " + table + " ("
                    + "id CHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,"
                    + " name TEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,"
                    + " lock_name VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,"
                    + " token BIGINT NOT NULL,"
                    + " holder_conn BIGINT,"
                    + " owner_host VARCHAR(255) CHARACTER SET utf8mb4,"
                    + " owner_pid BIGINT,"
                    + " owner_id VARCHAR(64) CHARACTER SET ascii,"
                    + " acquired_at_ms BIGINT) ENGINE=InnoDB");
            s.execute("CREATE TABLE IF NOT EXISTS " + sessionsTable() + " (conn_id BIGINT NOT NULL PRIMARY KEY,"
                    + " owner_host VARCHAR(255) CHARACTER SET utf8mb4 NOT NULL, owner_pid BIGINT NOT NULL,"
                    + " owner_id VARCHAR(64) CHARACTER SET ascii NOT NULL, since_ms BIGINT) ENGINE=InnoDB");
        }
        return database;
    }

    /** {@return whether both tables exist (and this user can see them)} */
    private boolean tablesExist(Connection c, String database) throws SQLException {
        int dot = table.indexOf('.');
        String schema = dot < 0 ? database : table.substring(0, dot);
        String name = table.substring(dot + 1);
        try (PreparedStatement ps = c.prepareStatement("SELECT COUNT(*) FROM information_schema.TABLES"
                + " WHERE TABLE_SCHEMA = ? AND TABLE_NAME IN (?, ?)")) {
            ps.setString(1, schema);
            ps.setString(2, name);
            ps.setString(3, name + "_sessions");
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() && rs.getInt(1) == 2;
            }
        }
    }

    @Override
    SessionInfo prepareSession(Connection c, OwnerInfo owner) throws SQLException {
        if (!c.getAutoCommit()) {
            c.setAutoCommit(true);
        }
        long id;
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT CONNECTION_ID()")) {
            rs.next();
            id = rs.getLong(1);
        }
        long uptimeMillis = Long.MAX_VALUE / 4;
        try (Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SHOW GLOBAL STATUS LIKE 'Uptime'")) {
            if (rs.next()) {
                uptimeMillis = rs.getLong(2) * 1000; // whole seconds
            }
        }
        try (PreparedStatement ps = c.prepareStatement(registerSession)) {
            setOwner(ps, 1, owner);
            ps.executeUpdate();
        } catch (SQLException e) {
            // 1142: INSERT denied; 1290: --read-only; 1792: read-only transaction
            if (e.getErrorCode() != 1142 && e.getErrorCode() != 1290 && e.getErrorCode() != 1792) {
                throw e;
            }
            unregistered(e);
        }
        return new SessionInfo(id, uptimeMillis);
    }

    @Override
    String registerName(SqlSession s, LockKey key) throws SQLException {
        PreparedStatement ps = s.prepare(registerName);
        ps.setString(1, key.recordId());
        ps.setString(2, key.name());
        ps.setString(3, key.serverName());
        ps.executeUpdate();
        return null; // names map to 160-bit digests: no collisions to report
    }

    @Override
    boolean lock(SqlSession s, LockKey key, LockMode mode, long waitNanos) throws SQLException, InterruptedException {
        if (mode == LockMode.SHARED) {
            throw new UnsupportedOperationException("MySQL/MariaDB have no shared user locks");
        }
        PreparedStatement ps = s.prepare("SELECT GET_LOCK(?, ?)");
        ps.setString(1, key.serverName());
        if (waitNanos <= 0) {
            ps.setInt(2, 0);
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1) == 1; // 0: busy; NULL: an error, nothing held
            }
        }
        Integer got = executeWaiting(s, ps, 2, waitNanos);
        return got != null && got == 1; // 0: timed out; NULL (read as 0): killed, nothing held
    }

    @Override
    OptionalLong lockAndIssue(SqlSession s, LockKey key, LockMode mode, OwnerInfo owner, long waitNanos)
            throws SQLException, InterruptedException {
        if (mode == LockMode.SHARED) {
            throw new UnsupportedOperationException("MySQL/MariaDB have no shared user locks");
        }
        PreparedStatement ps = s.prepareReturningKeys(lockAndIssue);
        setRecord(ps, key, owner);
        ps.setString(8, key.serverName());
        int rows;
        if (waitNanos <= 0) {
            ps.setInt(9, 0);
            rows = ps.executeUpdate();
        } else {
            Integer waited = executeWaiting(s, ps, 9, waitNanos);
            rows = waited == null ? 0 : waited;
        }
        if (rows == 0) {
            return OptionalLong.empty(); // GET_LOCK returned 0 (busy, timed out) or NULL (killed): nothing held
        }
        return OptionalLong.of(insertId(s, ps));
    }

    @Override
    OptionalLong issueToken(SqlSession s, LockKey key, LockMode mode, OwnerInfo owner) throws SQLException {
        PreparedStatement ps = s.prepareReturningKeys(issue);
        setRecord(ps, key, owner);
        ps.setString(8, key.serverName());
        if (ps.executeUpdate() == 0) {
            return OptionalLong.empty(); // IS_USED_LOCK named another session, or none
        }
        return OptionalLong.of(insertId(s, ps));
    }

    @Override
    int tryPermits(SqlSession s, List<LockKey> permits) throws SQLException {
        StringBuilder sql = new StringBuilder("SELECT CASE");
        for (int i = 0; i < permits.size(); i++) {
            sql.append(" WHEN GET_LOCK(?, 0) = 1 THEN ").append(i); // CASE stops at the first success
        }
        sql.append(" ELSE -1 END");
        PreparedStatement ps = s.prepare(sql.toString());
        for (int i = 0; i < permits.size(); i++) {
            ps.setString(i + 1, permits.get(i).serverName());
        }
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getInt(1);
        }
    }

    @Override
    boolean awaitPermit(SqlSession s, LockKey permit, long waitNanos) throws SQLException, InterruptedException {
        PreparedStatement ps = s.prepare("SELECT GET_LOCK(?, ?) = 1");
        ps.setString(1, permit.serverName());
        Integer got = executeWaiting(s, ps, 2, waitNanos);
        return got != null && got == 1;
    }

    @Override
    boolean unlock(SqlSession s, LockKey key, LockMode mode) throws SQLException {
        PreparedStatement ps = s.prepare("SELECT RELEASE_LOCK(?)");
        ps.setString(1, key.serverName());
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getInt(1) == 1; // 0: another session holds it; NULL: nobody does
        }
    }

    @Override
    boolean holds(SqlSession s, LockKey key, LockMode mode) throws SQLException {
        PreparedStatement ps = s.prepare("SELECT IS_USED_LOCK(?) = CONNECTION_ID()");
        ps.setString(1, key.serverName());
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            return rs.getInt(1) == 1;
        }
    }

    @Override
    LockStatus status(SqlSession s, LockKey key) throws SQLException {
        PreparedStatement ps = s.prepare(status);
        ps.setString(1, key.serverName());
        ps.setString(2, key.recordId());
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            boolean held = isHeld(rs);
            long token = rs.getLong("token");
            if (rs.wasNull()) {
                token = -1;
            }
            if (held) {
                return new LockStatus(key.name(), LockStatus.State.HELD, Optional.ofNullable(owner(rs, "holder_", null)), token);
            }
            return new LockStatus(key.name(), LockStatus.State.FREE,
                    Optional.ofNullable(owner(rs, "owner_", "acquired_at_ms")), token);
        }
    }

    @Override
    List<Row> listRows(SqlSession s) throws SQLException {
        PreparedStatement ps = s.prepare(list);
        List<Row> rows = new java.util.ArrayList<>();
        try (ResultSet rs = ps.executeQuery()) {
            while (rs.next()) {
                boolean held = isHeld(rs);
                rows.add(new Row(rs.getString("id"), rs.getString("name"), rs.getLong("token"),
                        owner(rs, "owner_", "acquired_at_ms"), held, held ? owner(rs, "holder_", null) : null, 0));
            }
        }
        return rows;
    }

    /**
     * Row by row: the row's lock is taken with {@code GET_LOCK(name, 0)} (held or waited for, the
     * row stays), the row deleted if its token is still old enough, and the lock given back.
     */
    @Override
    PruneBatch pruneBatch(SqlSession s, String afterId, int limit, long marginMicros) throws SQLException {
        List<String[]> candidates = new java.util.ArrayList<>();
        PreparedStatement select = s.prepare("SELECT id, lock_name, name FROM " + table + " WHERE id > ? AND token < "
                + CLOCK_MICROS + " - ? ORDER BY id LIMIT ?");
        select.setString(1, afterId);
        select.setLong(2, marginMicros);
        select.setInt(3, limit);
        try (ResultSet rs = select.executeQuery()) {
            while (rs.next()) {
                candidates.add(new String[] {rs.getString(1), rs.getString(2), rs.getString(3)});
            }
        }
        List<String> removed = new java.util.ArrayList<>();
        PreparedStatement take = s.prepare("SELECT GET_LOCK(?, 0)");
        PreparedStatement delete = s.prepare("DELETE FROM " + table + " WHERE id = ? AND token < " + CLOCK_MICROS + " - ?");
        PreparedStatement give = s.prepare("SELECT RELEASE_LOCK(?)");
        for (String[] row : candidates) {
            take.setString(1, row[1]);
            try (ResultSet rs = take.executeQuery()) {
                if (!rs.next() || rs.getInt(1) != 1) {
                    continue; // held (or waited for): its row stays
                }
            }
            // Any failure from here discards the session (this class's rule), freeing the lock.
            delete.setString(1, row[0]);
            delete.setLong(2, marginMicros);
            if (delete.executeUpdate() == 1) {
                removed.add(row[2]);
            }
            give.setString(1, row[1]);
            give.executeQuery().close();
        }
        return new PruneBatch(candidates.isEmpty() ? null : candidates.get(candidates.size() - 1)[0], removed);
    }

    @Override
    List<Long> holderSessions(SqlSession s, LockKey key) throws SQLException {
        PreparedStatement ps = s.prepare("SELECT IS_USED_LOCK(?)");
        ps.setString(1, key.serverName());
        try (ResultSet rs = ps.executeQuery()) {
            rs.next();
            long id = rs.getLong(1);
            return rs.wasNull() ? List.of() : List.of(id);
        }
    }

    @Override
    boolean endSession(SqlSession s, long serverId) throws SQLException {
        try (Statement st = s.connection.createStatement()) {
            st.execute("KILL CONNECTION " + serverId); // a number from the server, not user input
            return true;
        } catch (SQLException e) {
            if (e.getErrorCode() == 1094) { // unknown thread id: already gone
                return false;
            }
            throw e;
        }
    }

    // ---------------------------------------------------------------- helpers

    /** Sets the seven parameters of a record write (id, name, lock name, owner). */
    private static void setRecord(PreparedStatement ps, LockKey key, OwnerInfo owner) throws SQLException {
        ps.setString(1, key.recordId());
        ps.setString(2, key.name());
        ps.setString(3, key.serverName());
        setOwner(ps, 4, owner);
    }

    private static long insertId(SqlSession s, PreparedStatement ps) throws SQLException {
        try (ResultSet keys = ps.getGeneratedKeys()) {
            if (keys != null && keys.next()) {
                return keys.getLong(1);
            }
        }
        try (Statement st = s.connection.createStatement(); ResultSet rs = st.executeQuery("SELECT LAST_INSERT_ID()")) {
            rs.next();
            return rs.getLong(1);
        }
    }

    /**
     * Runs a statement whose parameter {@code timeoutParam} is GET_LOCK's timeout, cancellable by
     * interrupting this thread.
     *
     * @return the update count, or the first column of the first row for a query; null when a
     *     MySQL wait had to be killed at its deadline
     */
    private Integer executeWaiting(SqlSession s, PreparedStatement ps, int timeoutParam, long waitNanos)
            throws SQLException, InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted before waiting for a MySQL user lock");
        }
        long millis = waitMillis(waitNanos);
        long deadline = Long.MAX_VALUE;
        BigDecimal seconds = waitSeconds(waitNanos);
        if (!fractionalTimeouts) {
            // MySQL waits whole seconds: round up, and kill the wait at the real deadline.
            seconds = seconds.setScale(0, java.math.RoundingMode.CEILING);
            deadline = waitNanos >= Long.MAX_VALUE / 8 ? Long.MAX_VALUE : System.nanoTime() + waitNanos;
        }
        ps.setBigDecimal(timeoutParam, seconds);
        s.networkTimeout(networkTimeoutFor(millis));
        Integer result = null;
        SQLException failure = null;
        CancelOnInterrupt.Watch watch = CancelOnInterrupt.watch(ps, deadline);
        try {
            if (ps.execute()) {
                try (ResultSet rs = ps.getResultSet()) {
                    result = rs.next() ? rs.getInt(1) : 0;
                }
            } else {
                result = ps.getUpdateCount();
            }
        } catch (SQLException e) {
            failure = e;
        } finally {
            watch.close();
        }
        if (watch.cancelled() && !watch.deadlinePassed()) {
            Thread.interrupted();
            throw new InterruptedException("the wait for a MySQL user lock was cancelled");
        }
        if (watch.cancelled()) {
            // Killed at the deadline. A KILL QUERY that arrives late could hit the next statement,
            // so the caller discards this session: make it look like a failure.
            throw new SpoiledSession("a MySQL lock wait was killed at its deadline", failure);
        }
        s.networkTimeout(SqlLockBackend.STATEMENT_TIMEOUT_MILLIS);
        if (failure != null) {
            throw failure;
        }
        return result;
    }
}
