package dev.kanuki.jdbc;

import dev.kanuki.LockBackendException;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.ProcessIdentity;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Idle connections kept for the next acquisition. A held lock owns its connection exclusively
 * (a session-level lock lives and dies with it); when the lock is released the connection comes
 * back here, so a hot lock costs no connection set-up. At most {@code maxIdle} are kept, none
 * longer than {@link #IDLE_LIMIT_NANOS}.
 *
 * <p>A connection that failed while it may have held a lock is never reused and never just
 * "closed": it is aborted, so that the server ends the session and frees its locks even when a
 * pooling DataSource is underneath.
 */
final class SessionPool {
    static final long IDLE_LIMIT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final ConnectionSource source;
    private final SqlDialect dialect;
    private final int maxIdle;
    private final ArrayDeque<SqlSession> idle = new ArrayDeque<>();
    private boolean closed;

    private final long restartGraceNanos;

    /**
     * @param restartGraceNanos how long after the server started sessions may not grant locks
     */
    SessionPool(ConnectionSource source, SqlDialect dialect, int maxIdle, long restartGraceNanos) {
        this.source = source;
        this.dialect = dialect;
        this.maxIdle = maxIdle;
        this.restartGraceNanos = restartGraceNanos;
    }

    /** {@return an idle session, or a new one} */
    SqlSession borrow() {
        List<SqlSession> expired = new ArrayList<>(0);
        SqlSession found = null;
        long now = System.nanoTime();
        synchronized (idle) {
            if (closed) {
                throw new IllegalStateException("the lock backend for " + source.describe() + " is closed");
            }
            while (!idle.isEmpty()) {
                SqlSession s = idle.pollLast(); // most recently used: warmest, least likely timed out
                if (now - s.idleSinceNanos > IDLE_LIMIT_NANOS) {
                    expired.add(s);
                } else {
                    found = s;
                    break;
                }
            }
            // the rest are older still
            while (!idle.isEmpty() && now - idle.peekFirst().idleSinceNanos > IDLE_LIMIT_NANOS) {
                expired.add(idle.pollFirst());
            }
        }
        expired.forEach(SqlSession::close);
        if (found != null) {
            found.reused = true;
            return found;
        }
        return open();
    }

    /** {@return a brand-new session, bypassing the idle ones (after a reused one turned out dead)} */
    SqlSession open() {
        return adopt(connect());
    }

    /** {@return a new connection from the source, not yet a session} */
    Connection connect() {
        try {
            return source.open();
        } catch (SQLException e) {
            LockBackendException named = SqlConnectErrors.recognised(source.describe(), e);
            if (named != null) {
                throw named;
            }
            throw new LockBackendException("cannot connect to " + source.describe() + ": " + e.getMessage(),
                    "check that the server is running and that host, port, database, user and password are right", e);
        }
    }

    /**
     * Makes a session of a new connection: readies it and registers this process on it.
     *
     * @throws LockBackendException when that fails (the connection is closed)
     */
    SqlSession adopt(Connection connection) {
        try {
            long now = System.nanoTime();
            // Each session registers the process it works for once; status finds holders through it.
            OwnerInfo owner = new OwnerInfo(ProcessIdentity.host(), ProcessIdentity.pid(), ProcessIdentity.randomId(),
                    null, null);
            SqlDialect.SessionInfo info = dialect.prepareSession(connection, owner);
            long uptimeNanos = TimeUnit.MILLISECONDS.toNanos(Math.min(info.uptimeMillis(), Long.MAX_VALUE / 4 / 1_000_000));
            long graceLeft = Math.max(0, restartGraceNanos - uptimeNanos);
            SqlSession session = new SqlSession(connection, info.serverId(), now + graceLeft);
            session.reused = false;
            return session;
        } catch (SQLException | RuntimeException e) {
            try {
                connection.close();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            throw new LockBackendException("cannot set up a session on " + source.describe() + ": " + e.getMessage(),
                    "check the user's privileges", e);
        }
    }

    /** Takes back a session that holds no lock. */
    void giveBack(SqlSession session) {
        boolean keep;
        synchronized (idle) {
            keep = !closed && idle.size() < maxIdle;
            if (keep) {
                session.idleSinceNanos = System.nanoTime();
                idle.addLast(session);
            }
        }
        if (!keep) {
            session.close();
        }
    }

    /** Ends a session that failed, or may hold a lock nobody tracks: see the class comment. */
    void discard(SqlSession session) {
        session.abort();
    }

    /** {@return where the connections go, for messages} */
    String describe() {
        return source.describe();
    }

    void close() {
        List<SqlSession> all;
        synchronized (idle) {
            closed = true;
            all = new ArrayList<>(idle);
            idle.clear();
        }
        all.forEach(SqlSession::close);
    }
}
