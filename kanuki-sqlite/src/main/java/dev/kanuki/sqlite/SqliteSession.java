package dev.kanuki.sqlite;

import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.SafeNames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.Objects;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

/**
 * One connection to one lock database, with its prepared statements. The lock is this
 * connection's open {@code BEGIN IMMEDIATE} transaction; the database also holds one record:
 * the name, the last fencing token and the last owner.
 *
 * <p>Not thread-safe: one thread uses a session at a time (the backend hands sessions out and
 * takes them back).
 */
final class SqliteSession implements AutoCloseable {
    /** {@code SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW}: never open through a link. */
    private static final int OPEN_FLAGS = 0x00000002 | 0x00000004 | 0x01000000;
    private static final int SQLITE_BUSY = 5;
    private static final int SQLITE_LOCKED = 6;
    private static final long COMMIT_RETRY_MILLIS = 2000;

    /** A lock database's record. */
    record Record(String name, long token, OwnerInfo owner) {
    }

    final Path path;
    private final Object fileKey;
    private final Connection connection;
    private final PreparedStatement beginImmediate;
    private final PreparedStatement commit;
    private final PreparedStatement rollback;
    private final PreparedStatement bump;
    private final PreparedStatement insert;
    private final PreparedStatement read;
    private boolean inTransaction;
    long idleSince;

    private SqliteSession(Path path, Object fileKey, Connection connection) throws SQLException {
        this.path = path;
        this.fileKey = fileKey;
        this.connection = connection;
        this.beginImmediate = connection.prepareStatement("BEGIN IMMEDIATE");
        this.commit = connection.prepareStatement("COMMIT");
        this.rollback = connection.prepareStatement("ROLLBACK");
        this.bump = connection.prepareStatement("UPDATE kanuki_lock SET token = max(token + 1, ?), owner_host = ?,"
                + " owner_pid = ?, owner_id = ?, acquired_at = ? WHERE id = 0 AND name = ? RETURNING token");
        this.insert = connection.prepareStatement("INSERT INTO kanuki_lock (id, name, token, owner_host, owner_pid,"
                + " owner_id, acquired_at) VALUES (0, ?, ?, ?, ?, ?, ?)");
        this.read = connection.prepareStatement("SELECT name, token, owner_host, owner_pid, owner_id, acquired_at"
                + " FROM kanuki_lock WHERE id = 0");
    }

    /**
     * Opens (creating when missing) the lock database at {@code path}.
     *
     * @param path the database file
     * @param settings journal mode and synchronous setting for new files and this connection
     * @return an open session, not in a transaction
     * @throws SQLException when SQLite fails
     * @throws IOException when the file cannot be checked
     */
    static SqliteSession open(Path path, SqliteSettings settings) throws SQLException, IOException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.setupBusyTimeoutMillis());
        while (true) {
            try {
                return openOnce(path, settings);
            } catch (SQLException e) {
                // Several processes creating one lock database at once: switching a new file to WAL
                // needs it to themselves, and SQLite answers SQLITE_BUSY there without waiting.
                // Setting up is idempotent, so go round again.
                if (!isBusy(e) || System.nanoTime() - deadline > 0) {
                    throw e;
                }
                try {
                    Thread.sleep(1 + java.util.concurrent.ThreadLocalRandom.current().nextInt(10));
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /**
     * SQLite writes the database and its side files ({@code -wal}, {@code -shm}, {@code -journal})
     * wherever they lead: a hard link or symbolic link planted at one of them (found by the fault
     * suite: a hard link at {@code -shm}) would have SQLite overwrite the file it points to. Every
     * one that exists must be a regular file with one link.
     */
    static void refusePlantedFiles(Path path) throws IOException {
        for (String suffix : new String[] {"", "-wal", "-shm", "-journal"}) {
            Path p = path.resolveSibling(path.getFileName() + suffix);
            java.util.Map<String, Object> attributes;
            try {
                // One stat: side files come and go as other processes use the database (a journal
                // deleted between two separate checks is not a planted file).
                attributes = Files.readAttributes(p, "unix:mode,nlink", LinkOption.NOFOLLOW_LINKS);
            } catch (java.nio.file.NoSuchFileException gone) {
                continue;
            }
            int mode = (Integer) attributes.get("mode");
            if ((mode & 0170000) != 0100000) { // S_IFMT, S_IFREG
                throw new IOException(p + " is not a regular file (a link, a directory or a special file); kanuki "
                        + "never writes a lock database through it: remove it");
            }
            Object links = attributes.get("nlink");
            if (links instanceof Integer n && n > 1) {
                throw new IOException(p + " has " + n + " hard links; kanuki never writes a lock database that is "
                        + "also another file: remove it");
            }
        }
    }

    private static SqliteSession openOnce(Path path, SqliteSettings settings) throws SQLException, IOException {
        if (Files.isSymbolicLink(path)) {
            throw new IOException(path + " is a symbolic link; kanuki never opens a lock database through a link");
        }
        refusePlantedFiles(path);
        Properties props = new Properties();
        props.setProperty("open_mode", Integer.toString(OPEN_FLAGS));
        props.setProperty("busy_timeout", Integer.toString(settings.setupBusyTimeoutMillis()));
        // The driver would otherwise run a regular expression over the SQL after every statement.
        props.setProperty("jdbc.get_generated_keys", "false");
        Connection connection = org.sqlite.JDBC.createConnection("jdbc:sqlite:" + path, props);
        try {
            try (Statement s = connection.createStatement()) {
                boolean hasTable;
                try (ResultSet rs = s.executeQuery("SELECT count(*) FROM sqlite_master WHERE type = 'table'"
                        + " AND name = 'kanuki_lock'")) {
                    hasTable = rs.next() && rs.getInt(1) > 0;
                }
                if (!hasTable) {
                    // A new file: its journal mode is chosen once, here, and kept in the file.
                    s.execute("PRAGMA journal_mode = " + settings.journalMode());
                    s.execute("CREATE TABLE IF NOT EXISTS kanuki_lock (id INTEGER PRIMARY KEY CHECK (id = 0),"
                            + " name TEXT NOT NULL, token INTEGER NOT NULL, owner_host TEXT, owner_pid INTEGER,"
                            + " owner_id TEXT, acquired_at INTEGER)");
                }
                s.execute("PRAGMA synchronous = " + settings.synchronous());
                // The lock is a try-lock: SQLITE_BUSY at once, the engine's backoff does the waiting.
                s.execute("PRAGMA busy_timeout = 0");
            }
            Object key = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
            return new SqliteSession(path, key, connection);
        } catch (SQLException | IOException | RuntimeException e) {
            try {
                connection.close();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    /**
     * @return true when this connection now holds the database's write lock; false on
     *     {@code SQLITE_BUSY} (another connection holds it)
     */
    boolean beginImmediate() throws SQLException {
        try {
            beginImmediate.execute();
            inTransaction = true;
            return true;
        } catch (SQLException e) {
            if (isBusy(e)) {
                return false;
            }
            throw e;
        }
    }

    /**
     * Commits. In the rollback-journal mode ({@code journal=delete}) a commit needs every reader
     * gone, and a reader ({@code kanuki status} in another process) can be there for an instant:
     * SQLite then answers {@code SQLITE_BUSY} and keeps the transaction open, so try again
     * briefly. (WAL readers never block a commit.)
     */
    void commit() throws SQLException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(COMMIT_RETRY_MILLIS);
        while (true) {
            try {
                commit.execute();
                inTransaction = false;
                return;
            } catch (SQLException e) {
                if (!isBusy(e) || System.nanoTime() - deadline > 0) {
                    throw e;
                }
                try {
                    Thread.sleep(1);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    void rollback() throws SQLException {
        inTransaction = false;
        rollback.execute();
    }

    /**
     * Writes the next fencing token and the owner, inside the write transaction.
     *
     * @return the new token
     * @throws NameCollisionException when the database belongs to another name
     */
    long issueToken(String name, OwnerInfo owner) throws SQLException {
        long floor = timeFloor();
        bump.setLong(1, floor);
        bump.setString(2, owner.host());
        bump.setLong(3, owner.pid());
        bump.setString(4, owner.id());
        bump.setLong(5, owner.acquiredAt().toEpochMilli());
        bump.setString(6, name);
        try (ResultSet rs = bump.executeQuery()) {
            if (rs.next()) {
                return rs.getLong(1);
            }
        }
        Record existing = read();
        if (existing != null) {
            throw new NameCollisionException(path, existing.name(), name);
        }
        insert.setString(1, name);
        insert.setLong(2, floor);
        insert.setString(3, owner.host());
        insert.setLong(4, owner.pid());
        insert.setString(5, owner.id());
        insert.setLong(6, owner.acquiredAt().toEpochMilli());
        insert.executeUpdate();
        return floor;
    }

    /**
     * The lowest token a new acquisition may get: microseconds of the wall clock. A database
     * deleted or replaced behind its holders (an operator's {@code rm}, a restored backup)
     * starts again from here, above every token it issued before, unless the name was taken
     * more than a million times a second or the clock went back.
     */
    private static long timeFloor() {
        return System.currentTimeMillis() * 1000;
    }

    /** {@return the record, or null when the database has none yet} */
    Record read() throws SQLException {
        try (ResultSet rs = read.executeQuery()) {
            if (!rs.next()) {
                return null;
            }
            String host = rs.getString(3);
            String id = rs.getString(5);
            OwnerInfo owner = host == null || id == null ? null
                    : new OwnerInfo(host, rs.getLong(4), id, Instant.ofEpochMilli(rs.getLong(6)), null);
            return new Record(rs.getString(1), rs.getLong(2), owner);
        }
    }

    /**
     * Asks SQLite whether this connection is inside a transaction, i.e. still holds the lock:
     * {@code BEGIN} fails with "cannot start a transaction within a transaction" exactly then.
     */
    boolean stillInTransaction() throws SQLException {
        if (!inTransaction) {
            return false;
        }
        try (Statement s = connection.createStatement()) {
            s.execute("BEGIN");
        } catch (SQLException e) {
            if (String.valueOf(e.getMessage()).contains("within a transaction")) {
                return true;
            }
            throw e;
        }
        // The transaction had ended behind our back (SQLite rolls back on some I/O errors).
        inTransaction = false;
        try (Statement s = connection.createStatement()) {
            s.execute("ROLLBACK");
        }
        return false;
    }

    /** {@return true when the file at {@link #path} is still the file this session opened} */
    boolean stillAtPath() {
        try {
            Object now = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
            return Objects.equals(now, fileKey);
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            return false;
        }
    }

    boolean isOpen() {
        try {
            return !connection.isClosed();
        } catch (SQLException e) {
            return false;
        }
    }

    static boolean isBusy(SQLException e) {
        int code = e.getErrorCode() & 0xff;
        return code == SQLITE_BUSY || code == SQLITE_LOCKED;
    }

    @Override
    public void close() {
        try {
            connection.close(); // also ends an open transaction, releasing the lock
        } catch (SQLException e) {
            // nothing more to free
        }
    }

    /** The database at a name's path records another name: a hash collision, or a planted file. */
    static final class NameCollisionException extends SQLException {
        private static final long serialVersionUID = 1L;

        NameCollisionException(Path path, String recorded, String wanted) {
            super("lock database " + path + " belongs to lock '" + SafeNames.printable(recorded)
                    + "', not to '" + SafeNames.printable(wanted) + "'");
        }
    }
}
