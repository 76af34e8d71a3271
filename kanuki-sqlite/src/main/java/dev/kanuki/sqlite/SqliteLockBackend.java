package dev.kanuki.sqlite;

import dev.kanuki.Capabilities;
import dev.kanuki.LeaseKind;
import dev.kanuki.LockBackendException;
import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.SafeNames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code sqlite:DIR}: a try-lock on SQLite's write lock. Each lock name has its own SQLite
 * database in {@code DIR}; holding the lock is holding a connection with an open
 * {@code BEGIN IMMEDIATE} transaction on it, i.e. SQLite's write lock. {@code BEGIN IMMEDIATE}
 * fails at once with {@code SQLITE_BUSY} (busy timeout 0) while another connection holds it, and
 * the engine's backoff does the waiting (SQLite cannot wake a waiter). The operating system frees
 * the lock when the holder's process dies, however it dies.
 *
 * <p><b>Fencing and owner records.</b> A token written inside the lock's own transaction would
 * be rolled back if the holder crashed, and the next holder would get the same token again. So
 * the holder first commits the next token and itself as owner, then takes the write lock again
 * and checks that the record is still its own: if another process slipped into that gap, the
 * record shows it and this attempt goes round again (at most three times, then reports busy).
 * A committed token survives every process crash ({@code synchronous=normal}) or also power
 * loss ({@code synchronous=full}). Releasing is a {@code ROLLBACK}: nothing to undo, so it is
 * cheap and cannot fail half-way.
 *
 * <p><b>Why one database per name.</b> SQLite has one write lock per database file: one file for
 * all names would make every name wait for every other. One file per name keeps unrelated names
 * apart, and its record needs no key. Names map to file names through {@link SqliteNames}, so
 * no name can reach outside {@code DIR}.
 *
 * <p>Hazards handled here: a lock database removed or replaced while held (checked after every
 * acquisition and by {@link #verify}); a symbolic link planted in place of a database (never
 * opened); a database that records another name (reported, never shared). Not for network file
 * systems: their byte-range locks, and WAL's shared memory, are unreliable there.
 */
final class SqliteLockBackend implements LockBackend {
    private static final Logger log = LoggerFactory.getLogger(SqliteLockBackend.class);
    private static final Capabilities CAPABILITIES = Capabilities.builder(LeaseKind.SESSION)
            .crossProcess().semaphores().persistentFencing().ownerRecords().build();
    private static final int MAX_IDLE_SESSIONS = 64;
    private static final int GAP_ROUNDS = 3;
    private static final int PATHS_REMEMBERED = 1024;
    /** A lock's database (not a permit's): readable prefix, 128-bit digest, {@code .db}. */
    private static final java.util.regex.Pattern LOCK_FILE = java.util.regex.Pattern.compile("[A-Za-z0-9_.-]*\\.[0-9a-f]{32}\\.db");

    private final Path directory;
    private final SqliteSettings settings;
    /** Idle connections by database file, least recently returned first. */
    private final LinkedHashMap<Path, ArrayDeque<SqliteSession>> idle = new LinkedHashMap<>(16, 0.75f, true);
    private int idleCount;
    private final java.util.concurrent.ConcurrentHashMap<String, Path> paths = new java.util.concurrent.ConcurrentHashMap<>();
    private boolean closed;

    SqliteLockBackend(Path directory, SqliteSettings settings) {
        this.directory = directory;
        this.settings = settings;
    }

    /** A held lock: the session whose transaction is the lock. */
    static final class SqliteGrant implements Grant {
        final SqliteSession session;
        final String ownerId;
        private final long token;
        /**
         * Guards {@link #released} and the session's use by release and verify: a lock, not the
         * grant's monitor, because both call the database (a virtual thread blocked inside
         * {@code synchronized} pins its carrier on JDK 21 to 23).
         */
        final ReentrantLock state = new ReentrantLock();
        boolean released;

        SqliteGrant(SqliteSession session, String ownerId, long token) {
            this.session = session;
            this.ownerId = ownerId;
            this.token = token;
        }

        @Override
        public long fencingToken() {
            return token;
        }
    }

    @Override
    public Capabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public String scope() {
        return "sqlite:" + directory;
    }

    @Override
    public Optional<Grant> tryAcquire(LockRequest request) {
        if (request.mode() == LockMode.SHARED) {
            throw new UnsupportedOperationException("sqlite: has no shared locks");
        }
        if (request.mode() == LockMode.PERMIT) {
            for (int slot = 0; slot < request.permits(); slot++) {
                Optional<Grant> grant = attempt(directory.resolve(SqliteNames.permitFile(request.name(), slot)), request);
                if (grant.isPresent()) {
                    return grant;
                }
            }
            return Optional.empty();
        }
        return attempt(lockPath(request.name()), request);
    }

    /** {@return the database of a lock name; the last few are remembered (a digest per attempt adds up)} */
    private Path lockPath(String name) {
        Path path = paths.get(name);
        if (path == null) {
            if (paths.size() >= PATHS_REMEMBERED) {
                paths.clear();
            }
            path = directory.resolve(SqliteNames.lockFile(name));
            paths.put(name, path);
        }
        return path;
    }

    private Optional<Grant> attempt(Path path, LockRequest request) {
        for (int replaced = 0; replaced < 3; replaced++) {
            SqliteSession session = take(path);
            Optional<Grant> grant;
            try {
                grant = lockAndIssue(session, request);
            } catch (SqliteSession.NameCollisionException e) {
                session.close();
                throw new LockBackendException(e.getMessage(), "move the foreign file out of " + directory, e);
            } catch (SQLException e) {
                session.close();
                throw failure("cannot lock " + path, e);
            } catch (RuntimeException | Error e) {
                session.close();
                throw e;
            }
            if (grant.isPresent()) {
                if (session.stillAtPath()) {
                    return grant;
                }
                // Locked a file that was removed or replaced: it protects nothing. Open the new one.
                session.close();
                continue;
            }
            giveBack(session);
            return grant;
        }
        throw new LockBackendException("lock database " + path + " keeps being removed or replaced",
                "something else is deleting files in " + directory + "; stop it", null);
    }

    /** How often a busy answer is tried again while the kernel's lock table shows the write lock free. */
    private static final int TRANSIENT_BUSY_RETRIES = 5;

    /**
     * Takes the write lock, or says it is held. SQLite can answer busy for an instant when nobody
     * holds the write lock (seen about once in 1,000 tries beside a {@code status} loop in another
     * process, whose connections use WAL's shared memory too): when the kernel's lock table shows
     * the write lock free, try again, so that busy means held.
     */
    private static boolean beginUnlessHeld(SqliteSession session) throws SQLException {
        for (int retry = 0; ; retry++) {
            if (session.beginImmediate()) {
                return true;
            }
            if (retry == TRANSIENT_BUSY_RETRIES) {
                return false;
            }
            Optional<Boolean> held = WalWriteLock.isHeld(session.path);
            if (held.isEmpty() || held.get()) {
                return false;
            }
            Thread.yield();
        }
    }

    /** The acquisition described in the class comment: commit the token, then lock and check. */
    private static Optional<Grant> lockAndIssue(SqliteSession session, LockRequest request) throws SQLException {
        if (!beginUnlessHeld(session)) {
            return Optional.empty();
        }
        OwnerInfo owner = request.owner();
        for (int round = 0; round < GAP_ROUNDS; round++) {
            long token;
            try {
                token = session.issueToken(request.name(), owner);
                session.commit();
            } catch (SQLException e) {
                rollbackQuietly(session);
                throw e;
            }
            if (!beginUnlessHeld(session)) {
                return Optional.empty(); // another process took it in the gap: it holds the lock now
            }
            SqliteSession.Record record = session.read();
            if (record != null && record.token() == token && record.owner() != null
                    && owner.id().equals(record.owner().id())) {
                return Optional.of(new SqliteGrant(session, owner.id(), token));
            }
            // Another process took and released the lock in the gap, so our token is not the
            // newest any more. We hold the lock again: issue a fresh one.
        }
        rollbackQuietly(session);
        return Optional.empty();
    }

    @Override
    public void release(Grant grant) {
        SqliteGrant g = (SqliteGrant) grant;
        boolean reusable;
        g.state.lock();
        try {
            if (g.released) {
                return;
            }
            g.released = true;
            try {
                g.session.rollback();
                reusable = true;
            } catch (SQLException e) {
                reusable = false;
            }
        } finally {
            g.state.unlock();
        }
        if (reusable) {
            giveBack(g.session);
        } else {
            g.session.close(); // closing the connection ends the transaction, and the lock, too
        }
    }

    @Override
    public boolean verify(Grant grant) {
        SqliteGrant g = (SqliteGrant) grant;
        g.state.lock();
        try {
            if (g.released || !g.session.isOpen()) {
                return false;
            }
            try {
                if (!g.session.stillInTransaction() || !g.session.stillAtPath()) {
                    return false;
                }
                SqliteSession.Record record = g.session.read();
                return record != null && record.owner() != null && g.ownerId.equals(record.owner().id());
            } catch (SQLException e) {
                if (!g.session.isOpen()) {
                    return false;
                }
                throw failure("cannot check the lock on " + g.session.path, e);
            }
        } finally {
            g.state.unlock();
        }
    }

    @Override
    public LockStatus status(String name) {
        Path path = lockPath(name);
        if (!Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
            return new LockStatus(name, LockStatus.State.FREE, Optional.empty(), -1);
        }
        if (!Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS)) {
            log.warn("{} is not a regular file (a planted link?); it is never opened", path);
            return new LockStatus(name, LockStatus.State.UNKNOWN, Optional.empty(), -1);
        }
        SqliteSession session = take(path);
        try {
            SqliteSession.Record record;
            LockStatus.State state;
            try {
                record = session.read();
            } catch (SQLException e) {
                if (!SqliteSession.isBusy(e)) {
                    throw e;
                }
                record = null;
            }
            state = probe(session);
            giveBack(session);
            if (record != null && !record.name().equals(name)) {
                log.warn("lock database {} records lock '{}', not '{}'", path, SafeNames.printable(record.name()),
                        SafeNames.printable(name));
                return new LockStatus(name, LockStatus.State.UNKNOWN, Optional.empty(), -1);
            }
            return new LockStatus(name, state, Optional.ofNullable(record == null ? null : record.owner()),
                    record == null ? -1 : record.token());
        } catch (SQLException e) {
            session.close();
            throw failure("cannot read the status of " + path, e);
        }
    }

    /**
     * Refuses, saying what stays and why. A name's database is the lock itself (its write lock) and
     * keeps the name's last fencing token. Without it the name's next token would rest on the wall
     * clock's floor alone, so a clock set back would repeat tokens a resource has seen; and a
     * process that opened the database just before its removal would lock a file nobody else
     * sees (caught by the check after each acquisition, at the cost of a retry) — and, in WAL
     * mode, would keep using the old database's {@code -wal} and {@code -shm} files, which a new
     * database at the same path finds by path too: two databases sharing one write lock and one
     * log. Nothing in the protocol keeps openers out while a database is removed, so none is. The
     * databases are small and one per name ever locked, like the names themselves.
     */
    @Override
    public List<String> prune(boolean dryRun) {
        long databases;
        try (java.util.stream.Stream<Path> entries = Files.list(directory)) {
            databases = entries.filter(p -> p.getFileName().toString().endsWith(".db")).count();
        } catch (IOException e) {
            throw new LockBackendException("cannot list " + directory + ": " + e, "check the directory's permissions", e);
        }
        throw new UnsupportedOperationException("sqlite: keeps one database per lock name (" + databases + " in "
                + directory + "), free or not, and prune removes none: each is the lock itself and holds its name's "
                + "last fencing token (without it a clock set back would repeat tokens), and another process may "
                + "have it open (its -wal and -shm files are found by path, so a new database beside them would "
                + "share them); delete the directory only when no process uses its locks");
    }

    /**
     * Whether a lock database's write lock is held, without disturbing an acquirer: read from the
     * kernel's lock table where it can tell ({@link WalWriteLock}), else by trying the write lock
     * and giving it back at once (an acquirer trying at that instant sees the lock busy).
     *
     * @param session an open session on the database, after a read (so that WAL's shared memory is open)
     */
    private static LockStatus.State probe(SqliteSession session) throws SQLException {
        Optional<Boolean> held = WalWriteLock.isHeld(session.path);
        if (held.isPresent()) {
            return held.get() ? LockStatus.State.HELD : LockStatus.State.FREE;
        }
        if (session.beginImmediate()) {
            session.rollback();
            return LockStatus.State.FREE;
        }
        return LockStatus.State.HELD;
    }

    /**
     * Every lock database in the directory (every name ever locked there), with its record and
     * whether it is held now (probed as {@link #status} does).
     */
    @Override
    public List<LockStatus> list() {
        List<Path> files;
        try (java.util.stream.Stream<Path> entries = Files.list(directory)) {
            files = entries.filter(p -> LOCK_FILE.matcher(p.getFileName().toString()).matches())
                    .filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)).sorted().toList();
        } catch (IOException e) {
            throw new LockBackendException("cannot list " + directory + ": " + e, "check the directory's permissions", e);
        }
        List<LockStatus> out = new ArrayList<>();
        for (Path file : files) {
            SqliteSession session = take(file);
            try {
                SqliteSession.Record record = session.read();
                if (record == null || !SqliteNames.lockFile(record.name()).equals(file.getFileName().toString())) {
                    giveBack(session);
                    continue; // empty, or not the database of the name it records
                }
                LockStatus.State state = probe(session);
                giveBack(session);
                out.add(new LockStatus(record.name(), state, Optional.ofNullable(record.owner()), record.token()));
            } catch (SQLException e) {
                session.close();
                log.warn("cannot read lock database {}: {}", file, e.getMessage());
            }
        }
        return out;
    }

    // ---------------------------------------------------------------- idle sessions

    private SqliteSession take(Path path) {
        synchronized (idle) {
            ArrayDeque<SqliteSession> sessions = idle.get(path);
            if (sessions != null) {
                SqliteSession s = sessions.pollLast();
                if (sessions.isEmpty()) {
                    idle.remove(path);
                }
                if (s != null) {
                    idleCount--;
                    return s;
                }
            }
        }
        try {
            return SqliteSession.open(path, settings);
        } catch (SQLException e) {
            throw failure("cannot open lock database " + path, e);
        } catch (IOException e) {
            throw new LockBackendException("cannot open lock database " + path + ": " + e.getMessage(),
                    "check the directory " + directory + " (free space, permissions, planted links)", e);
        }
    }

    private void giveBack(SqliteSession session) {
        List<SqliteSession> evicted = new ArrayList<>(1);
        synchronized (idle) {
            if (closed || !session.isOpen()) {
                evicted.add(session);
            } else {
                idle.computeIfAbsent(session.path, p -> new ArrayDeque<>(2)).addLast(session);
                idleCount++;
                Iterator<Map.Entry<Path, ArrayDeque<SqliteSession>>> eldest = idle.entrySet().iterator();
                while (idleCount > MAX_IDLE_SESSIONS && eldest.hasNext()) {
                    ArrayDeque<SqliteSession> q = eldest.next().getValue();
                    evicted.add(q.pollFirst());
                    idleCount--;
                    if (q.isEmpty()) {
                        eldest.remove();
                    }
                }
            }
        }
        evicted.forEach(SqliteSession::close);
    }

    @Override
    public void close() {
        List<SqliteSession> all = new ArrayList<>();
        synchronized (idle) {
            closed = true;
            idle.values().forEach(all::addAll);
            idle.clear();
            idleCount = 0;
        }
        all.forEach(SqliteSession::close);
    }

    // ---------------------------------------------------------------- helpers

    private static void rollbackQuietly(SqliteSession session) {
        try {
            session.rollback();
        } catch (SQLException e) {
            session.close();
        }
    }

    private LockBackendException failure(String what, SQLException e) {
        String hint = SqliteSession.isBusy(e) ? "another process keeps the database busy; retry"
                : "check " + directory + " (free space, permissions, a damaged database file)";
        return new LockBackendException(what + ": " + e.getMessage(), hint, e);
    }
}
