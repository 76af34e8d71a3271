package dev.kanuki.bench;

import java.math.BigDecimal;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Properties;
import java.util.UUID;

/**
 * The raw JDBC side of {@link SqlBench}: the bare lock statements, and the statements kanuki's
 * SQL backends run for one uncontended acquire (+ fencing token) + release, copied from kanuki-sqlite's
 * {@code SqliteSession}/{@code SqliteLockBackend} and kanuki-jdbc's {@code PostgresDialect} and
 * {@code MysqlDialect} (default table {@code kanuki_locks}; SQLite's {@code kanuki_lock}), run by
 * hand on one connection with statements prepared once. Update them when kanuki's change.
 */
final class SqlByHand {
    private SqlByHand() {
    }

    /** The owner fields kanuki writes with a token; constant here. */
    static final String HOST = "bench-host";
    static final long PID = ProcessHandle.current().pid();
    static final String OWNER_ID = UUID.randomUUID().toString().replace("-", "");

    /** SQLite: one lock database, opened as kanuki opens its own (WAL, synchronous=normal, busy_timeout 0). */
    static final class Sqlite implements AutoCloseable {
        private final Connection c;
        private final PreparedStatement beginImmediate;
        private final PreparedStatement commit;
        private final PreparedStatement rollback;
        private final PreparedStatement bump;
        private final PreparedStatement read;

        Sqlite(Path file) throws SQLException {
            Properties props = new Properties();
            props.setProperty("jdbc.get_generated_keys", "false"); // as kanuki: no regex over every statement
            c = org.sqlite.JDBC.createConnection("jdbc:sqlite:" + file, props);
            try (Statement s = c.createStatement()) {
                s.execute("PRAGMA journal_mode = wal");
                s.execute("CREATE TABLE IF NOT EXISTS kanuki_lock (id INTEGER PRIMARY KEY CHECK (id = 0),"
                        + " name TEXT NOT NULL, token INTEGER NOT NULL, owner_host TEXT, owner_pid INTEGER,"
                        + " owner_id TEXT, acquired_at INTEGER)");
                s.execute("INSERT OR IGNORE INTO kanuki_lock (id, name, token) VALUES (0, 'bench', 0)");
                s.execute("PRAGMA synchronous = normal");
                s.execute("PRAGMA busy_timeout = 0");
            }
            beginImmediate = c.prepareStatement("BEGIN IMMEDIATE");
            commit = c.prepareStatement("COMMIT");
            rollback = c.prepareStatement("ROLLBACK");
            bump = c.prepareStatement("UPDATE kanuki_lock SET token = max(token + 1, ?), owner_host = ?, owner_pid = ?,"
                    + " owner_id = ?, acquired_at = ? WHERE id = 0 AND name = ? RETURNING token");
            read = c.prepareStatement("SELECT name, token, owner_host, owner_pid, owner_id, acquired_at"
                    + " FROM kanuki_lock WHERE id = 0");
        }

        /** {@code BEGIN IMMEDIATE} + {@code COMMIT}: the floor. */
        void bare() throws SQLException {
            beginImmediate.execute();
            commit.execute();
        }

        /**
         * kanuki's acquisition: lock, write token and owner, commit (so the token survives), lock
         * again, read the record back (nobody took it in the gap); release: roll back.
         *
         * @return the token
         */
        long sameStatements() throws SQLException {
            beginImmediate.execute();
            long token;
            bump.setLong(1, System.currentTimeMillis() * 1000); // the token's floor, as kanuki's
            bump.setString(2, HOST);
            bump.setLong(3, PID);
            bump.setString(4, OWNER_ID);
            bump.setLong(5, System.currentTimeMillis());
            bump.setString(6, "bench");
            try (ResultSet rs = bump.executeQuery()) {
                rs.next();
                token = rs.getLong(1);
            }
            commit.execute();
            beginImmediate.execute();
            try (ResultSet rs = read.executeQuery()) {
                if (!rs.next() || rs.getLong(2) != token || !OWNER_ID.equals(rs.getString(5))) {
                    throw new SQLException("the record is not ours");
                }
            }
            rollback.execute();
            return token;
        }

        @Override
        public void close() throws SQLException {
            c.close();
        }
    }

    /** PostgreSQL: session-level advisory locks on a key kanuki does not use. */
    static final class Postgres implements AutoCloseable {
        private static final String TABLE = "kanuki_locks";
        private static final int KEY_HIGH = 0x6b616e75;
        private static final int KEY_LOW = 0x6b692131;
        private static final long KEY = ((long) KEY_HIGH << 32) | (KEY_LOW & 0xffffffffL);
        private static final String RECORD_ID = "bench-by-hand";
        private final Connection c;
        private final PreparedStatement tryLock;
        private final PreparedStatement unlock;
        private final PreparedStatement kanukiAwait;
        private final PreparedStatement tryAndIssue;

        /** @param c a connection to a database where kanuki has already made its table */
        Postgres(Connection c) throws SQLException {
            this.c = c;
            tryLock = c.prepareStatement("SELECT pg_try_advisory_lock(?, ?)");
            unlock = c.prepareStatement("SELECT pg_advisory_unlock(?, ?)");
            kanukiAwait = c.prepareStatement("SELECT set_config('lock_timeout', ?, true),"
                    + " set_config('statement_timeout', '0', true); SELECT pg_advisory_lock(?, ?)");
            tryAndIssue = c.prepareStatement("WITH l AS MATERIALIZED (SELECT pg_try_advisory_lock(?, ?) AS got), w AS ("
                    + "INSERT INTO " + TABLE + " AS t (id, name, lock_key, token, holder_pid,"
                    + " owner_host, owner_pid, owner_id, acquired_at_ms) SELECT ?, ?, ?,"
                    + " floor(extract(epoch from clock_timestamp()) * 1000000)::bigint, pg_backend_pid(), ?, ?, ?, ?"
                    + " FROM l WHERE l.got ON CONFLICT (id) DO UPDATE SET"
                    + " token = CASE WHEN t.token = 0 THEN excluded.token ELSE t.token + 1 END, lock_key = excluded.lock_key,"
                    + " holder_pid = excluded.holder_pid, owner_host = excluded.owner_host, owner_pid = excluded.owner_pid,"
                    + " owner_id = excluded.owner_id, acquired_at_ms = excluded.acquired_at_ms RETURNING t.token)"
                    + " SELECT l.got, (SELECT token FROM w) FROM l");
        }

        /** {@code pg_try_advisory_lock} + {@code pg_advisory_unlock}: the floor, and kanuki's {@code tryAcquire()}. */
        void bare() throws SQLException {
            tryLock();
            unlock();
        }

        /** kanuki's {@code acquire(timeout)}: set lock_timeout and lock in one batch, then unlock. */
        void sameStatementsAwait() throws SQLException {
            kanukiAwait.setString(1, "5000");
            bindKey(kanukiAwait, 2);
            boolean isResult = kanukiAwait.execute();
            int results = 0;
            while (true) {
                if (isResult) {
                    try (ResultSet rs = kanukiAwait.getResultSet()) {
                        results += rs.next() ? 1 : 0;
                    }
                } else if (kanukiAwait.getUpdateCount() == -1) {
                    break;
                }
                isResult = kanukiAwait.getMoreResults();
            }
            if (results != 2) {
                throw new SQLException("expected two results, got " + results);
            }
            unlock();
        }

        /**
         * kanuki's {@code tryAcquire()} + {@code fencingToken()} on a name whose holders ask for
         * tokens: the try and the token write in one statement, then unlock.
         */
        long fenced() throws SQLException {
            bindKey(tryAndIssue, 1);
            tryAndIssue.setString(3, RECORD_ID);
            tryAndIssue.setString(4, "bench-by-hand");
            tryAndIssue.setLong(5, KEY);
            tryAndIssue.setString(6, HOST);
            tryAndIssue.setLong(7, PID);
            tryAndIssue.setString(8, OWNER_ID);
            tryAndIssue.setLong(9, System.currentTimeMillis());
            long token;
            try (ResultSet rs = tryAndIssue.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    throw new SQLException("the advisory lock is taken");
                }
                token = rs.getLong(2);
            }
            unlock();
            return token;
        }

        private static void bindKey(PreparedStatement ps, int first) throws SQLException {
            ps.setInt(first, KEY_HIGH);
            ps.setInt(first + 1, KEY_LOW);
        }

        private void tryLock() throws SQLException {
            bindKey(tryLock, 1);
            if (!bool(tryLock)) {
                throw new SQLException("the advisory lock is taken");
            }
        }

        private void unlock() throws SQLException {
            bindKey(unlock, 1);
            if (!bool(unlock)) {
                throw new SQLException("the advisory lock was not held");
            }
        }

        private static boolean bool(PreparedStatement ps) throws SQLException {
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getBoolean(1);
            }
        }

        @Override
        public void close() throws SQLException {
            c.close();
        }
    }

    /** MariaDB/MySQL: {@code GET_LOCK} on a name kanuki does not use. */
    static final class MariaDb implements AutoCloseable {
        private static final String TABLE = "kanuki_locks";
        private static final String LOCK = "kanuki-bench:by-hand";
        private final Connection c;
        private final PreparedStatement getLock;
        private final PreparedStatement release;
        private final PreparedStatement issueToken;

        /** @param c a connection to a database where kanuki has already made its table */
        MariaDb(Connection c) throws SQLException {
            this.c = c;
            getLock = c.prepareStatement("SELECT GET_LOCK(?, ?)");
            release = c.prepareStatement("SELECT RELEASE_LOCK(?)");
            issueToken = c.prepareStatement("INSERT INTO " + TABLE + " (id, name, lock_name, token, holder_conn, owner_host,"
                    + " owner_pid, owner_id, acquired_at_ms) SELECT ?, ?, ?, LAST_INSERT_ID(UNIX_TIMESTAMP() * 1000000), CONNECTION_ID(), ?, ?, ?, ?"
                    + " FROM DUAL WHERE GET_LOCK(?, 0) = 1"
                    + " ON DUPLICATE KEY UPDATE token = LAST_INSERT_ID(IF(token = 0, VALUES(token), token + 1)), lock_name = VALUES(lock_name),"
                    + " holder_conn = VALUES(holder_conn), owner_host = VALUES(owner_host), owner_pid = VALUES(owner_pid),"
                    + " owner_id = VALUES(owner_id), acquired_at_ms = VALUES(acquired_at_ms)", Statement.RETURN_GENERATED_KEYS);
        }

        /**
         * {@code GET_LOCK(name, timeout)} + {@code RELEASE_LOCK}: with timeout 0 the floor and
         * kanuki's {@code tryAcquire()}; with a timeout, kanuki's {@code acquire(timeout)}.
         */
        void bare(BigDecimal timeoutSeconds) throws SQLException {
            getLock(timeoutSeconds);
            release();
        }

        /**
         * kanuki's {@code tryAcquire()} + {@code fencingToken()} on a name whose holders ask for
         * tokens: {@code GET_LOCK} and the token write in one statement, then release.
         */
        long fenced() throws SQLException {
            issueToken.setString(1, "bench-by-hand");
            issueToken.setString(2, "bench-by-hand");
            issueToken.setString(3, LOCK);
            issueToken.setString(4, HOST);
            issueToken.setLong(5, PID);
            issueToken.setString(6, OWNER_ID);
            issueToken.setLong(7, System.currentTimeMillis());
            issueToken.setString(8, LOCK);
            if (issueToken.executeUpdate() == 0) {
                throw new SQLException("the user lock is taken");
            }
            long token;
            try (ResultSet keys = issueToken.getGeneratedKeys()) {
                keys.next();
                token = keys.getLong(1);
            }
            release();
            return token;
        }

        private void getLock(BigDecimal timeoutSeconds) throws SQLException {
            getLock.setString(1, LOCK);
            getLock.setBigDecimal(2, timeoutSeconds);
            if (intOf(getLock) != 1) {
                throw new SQLException("the user lock is taken");
            }
        }

        private void release() throws SQLException {
            release.setString(1, LOCK);
            if (intOf(release) != 1) {
                throw new SQLException("the user lock was not held");
            }
        }

        private static int intOf(PreparedStatement ps) throws SQLException {
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getInt(1);
            }
        }

        @Override
        public void close() throws SQLException {
            c.close();
        }
    }
}
