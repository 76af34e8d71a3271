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
 * SQL backends run for one uncontended acquire + release, copied from kanuki-sqlite's
 * {@code SqliteSession}/{@code SqliteLockBackend} and kanuki-jdbc's {@code PostgresDialect} and
 * {@code MysqlDialect} (default table {@code kanuki_locks}; SQLite's {@code kanuki_lock}), run by
 * hand on one connection with statements prepared once. Update them when kanuki's change.
 */
final class SqlByHand {
    private SqlByHand() {
    }

    /** The owner fields kanuki writes; constant here (kanuki makes a new id per acquisition). */
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
            bump = c.prepareStatement("UPDATE kanuki_lock SET token = token + 1, owner_host = ?, owner_pid = ?,"
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
            bump.setString(1, HOST);
            bump.setLong(2, PID);
            bump.setString(3, OWNER_ID);
            bump.setLong(4, System.currentTimeMillis());
            bump.setString(5, "bench");
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
        private final PreparedStatement kanukiTry;
        private final PreparedStatement kanukiAwait;

        /** @param c a connection to a database where kanuki has already made its table */
        Postgres(Connection c) throws SQLException {
            this.c = c;
            String upsert = "INSERT INTO " + TABLE + " AS t (id, name, lock_key, token, holder_pid, owner_host, owner_pid,"
                    + " owner_id, acquired_at_ms) %s"
                    + " ON CONFLICT (id) DO UPDATE SET token = t.token + 1, lock_key = excluded.lock_key,"
                    + " holder_pid = excluded.holder_pid, owner_host = excluded.owner_host, owner_pid = excluded.owner_pid,"
                    + " owner_id = excluded.owner_id, acquired_at_ms = excluded.acquired_at_ms"
                    + " RETURNING t.token";
            String others = "(SELECT string_agg(c.name, E'\\n') FROM " + TABLE + " c WHERE c.lock_key = ? AND c.id <> ?)";
            String write = String.format(upsert, "VALUES (?, ?, ?, 1, pg_backend_pid(), ?, ?, ?, ?)") + ", " + others;
            tryLock = c.prepareStatement("SELECT pg_try_advisory_lock(?, ?)");
            unlock = c.prepareStatement("SELECT pg_advisory_unlock(?, ?)");
            kanukiTry = c.prepareStatement("WITH l AS MATERIALIZED (SELECT pg_try_advisory_lock(?, ?) AS got),"
                    + " w AS (" + String.format(upsert, "SELECT ?, ?, ?, 1, pg_backend_pid(), ?, ?, ?, ? FROM l WHERE l.got") + ")"
                    + " SELECT l.got, (SELECT token FROM w), " + others + " FROM l");
            kanukiAwait = c.prepareStatement("SELECT set_config('lock_timeout', ?, true),"
                    + " set_config('statement_timeout', '0', true); SELECT pg_advisory_lock(?, ?); " + write);
        }

        /** {@code pg_try_advisory_lock} + {@code pg_advisory_unlock}: the floor. */
        void bare() throws SQLException {
            if (!bool(tryLock)) {
                throw new SQLException("the advisory lock is taken");
            }
            unlock();
        }

        /** kanuki's {@code tryAcquire()}: try-lock and record write in one statement, then unlock. */
        long sameStatementsTry() throws SQLException {
            tryLockBind(kanukiTry, 1);
            setWrite(kanukiTry, 3);
            long token;
            try (ResultSet rs = kanukiTry.executeQuery()) {
                rs.next();
                if (!rs.getBoolean(1)) {
                    throw new SQLException("the advisory lock is taken");
                }
                token = rs.getLong(2);
            }
            unlock();
            return token;
        }

        /** kanuki's {@code acquire(timeout)}: set lock_timeout, blocking lock, record write, then unlock. */
        long sameStatementsAwait() throws SQLException {
            kanukiAwait.setString(1, "5000");
            tryLockBind(kanukiAwait, 2);
            setWrite(kanukiAwait, 4);
            long token = -1;
            int results = 0;
            boolean isResult = kanukiAwait.execute();
            while (true) {
                if (isResult) {
                    try (ResultSet rs = kanukiAwait.getResultSet()) {
                        if (rs.next() && ++results == 3) { // set_config, pg_advisory_lock, the write
                            token = rs.getLong(1);
                        }
                    }
                } else if (kanukiAwait.getUpdateCount() == -1) {
                    break;
                }
                isResult = kanukiAwait.getMoreResults();
            }
            unlock();
            return token;
        }

        private static void tryLockBind(PreparedStatement ps, int first) throws SQLException {
            ps.setInt(first, KEY_HIGH);
            ps.setInt(first + 1, KEY_LOW);
        }

        private static void setWrite(PreparedStatement ps, int first) throws SQLException {
            ps.setString(first, RECORD_ID);
            ps.setString(first + 1, "bench-by-hand");
            ps.setLong(first + 2, KEY);
            ps.setString(first + 3, HOST);
            ps.setLong(first + 4, PID);
            ps.setString(first + 5, OWNER_ID);
            ps.setLong(first + 6, System.currentTimeMillis());
            ps.setLong(first + 7, KEY);
            ps.setString(first + 8, RECORD_ID);
        }

        private void unlock() throws SQLException {
            tryLockBind(unlock, 1);
            if (!bool(unlock)) {
                throw new SQLException("the advisory lock was not held");
            }
        }

        private boolean bool(PreparedStatement ps) throws SQLException {
            if (ps == tryLock) {
                tryLockBind(ps, 1);
            }
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
        private final PreparedStatement lockAndWrite;

        /** @param c a connection to a database where kanuki has already made its table */
        MariaDb(Connection c) throws SQLException {
            this.c = c;
            getLock = c.prepareStatement("SELECT GET_LOCK(?, 0)");
            release = c.prepareStatement("SELECT RELEASE_LOCK(?)");
            String update = " ON DUPLICATE KEY UPDATE token = LAST_INSERT_ID(token + 1), lock_name = VALUES(lock_name),"
                    + " holder_conn = VALUES(holder_conn), owner_host = VALUES(owner_host), owner_pid = VALUES(owner_pid),"
                    + " owner_id = VALUES(owner_id), acquired_at_ms = VALUES(acquired_at_ms)";
            String columns = "INSERT INTO " + TABLE + " (id, name, lock_name, token, holder_conn, owner_host, owner_pid, owner_id,"
                    + " acquired_at_ms) ";
            lockAndWrite = c.prepareStatement(columns + "SELECT ?, ?, ?, LAST_INSERT_ID(1), CONNECTION_ID(), ?, ?, ?, ? FROM DUAL"
                    + " WHERE GET_LOCK(?, ?) = 1" + update, Statement.RETURN_GENERATED_KEYS);
        }

        /** {@code GET_LOCK(name, 0)} + {@code RELEASE_LOCK}: the floor. */
        void bare() throws SQLException {
            getLock.setString(1, LOCK);
            if (intOf(getLock) != 1) {
                throw new SQLException("the user lock is taken");
            }
            release();
        }

        /**
         * kanuki's acquisition: {@code INSERT … SELECT … WHERE GET_LOCK(?, ?) = 1 ON DUPLICATE KEY
         * UPDATE}, the token from the generated keys, then {@code RELEASE_LOCK}.
         *
         * @param timeoutSeconds 0 for kanuki's {@code tryAcquire()}, the wait for {@code acquire(timeout)}
         */
        long sameStatements(int timeoutSeconds) throws SQLException {
            lockAndWrite.setString(1, "bench-by-hand");
            lockAndWrite.setString(2, "bench-by-hand");
            lockAndWrite.setString(3, LOCK);
            lockAndWrite.setString(4, HOST);
            lockAndWrite.setLong(5, PID);
            lockAndWrite.setString(6, OWNER_ID);
            lockAndWrite.setLong(7, System.currentTimeMillis());
            lockAndWrite.setString(8, LOCK);
            lockAndWrite.setBigDecimal(9, BigDecimal.valueOf(timeoutSeconds));
            if (lockAndWrite.executeUpdate() == 0) {
                throw new SQLException("the user lock is taken");
            }
            long token;
            try (ResultSet keys = lockAndWrite.getGeneratedKeys()) {
                keys.next();
                token = keys.getLong(1);
            }
            release();
            return token;
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
