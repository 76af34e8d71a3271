package dev.kanuki.jdbc;

import java.sql.SQLException;
import java.sql.Statement;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes a statement that blocks in the server ({@code pg_advisory_lock}, {@code GET_LOCK})
 * cancellable by {@link Thread#interrupt()}, which is how the engine cancels a wait.
 *
 * <p>JDBC drivers read from plain sockets, which ignore interrupts. So one daemon thread looks,
 * every {@value #CHECK_MILLIS} ms while some statement is blocked (and for a second after), at the interrupt
 * flags of the blocked threads, and cancels the statement of an interrupted one through the
 * driver ({@code Statement.cancel()}: a cancel request for PostgreSQL, {@code KILL QUERY} for
 * MySQL). It also cancels statements whose own deadline passed, for servers that can only time
 * out in whole seconds. This looks at flags in memory, not at the database: waiting itself is
 * still woken by the server.
 *
 * <p>The blocked thread decides what happened from {@link Watch#cancelled()}; a session whose
 * statement was cancelled is never reused, because a late cancel request could hit its next
 * statement.
 */
final class CancelOnInterrupt {
    private static final Logger log = LoggerFactory.getLogger(CancelOnInterrupt.class);
    static final long CHECK_MILLIS = 10;
    /** How long a cancelled statement may stay blocked before its cancel is sent again. */
    static final long RESEND_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    private static final Set<Watch> WATCHED = ConcurrentHashMap.newKeySet();
    /** How long the watcher keeps polling after the last watch closed, before it parks. */
    static final long LINGER_MILLIS = 1000;
    private static volatile Thread watcher;
    /** True while the watcher is parked until the next {@link #watch}. */
    private static volatile boolean sleeping;

    private CancelOnInterrupt() {
    }

    /** One blocked statement being watched. */
    static final class Watch implements AutoCloseable {
        private final Thread thread = Thread.currentThread();
        private final Statement statement;
        private final long deadlineNanos;
        private volatile boolean cancelled;
        private volatile boolean deadlinePassed;
        private long lastCancelNanos;
        /**
         * Orders {@link #check} and {@link #close()}: a lock, not the monitor, because a check
         * sends the cancel (a new connection to the server for PostgreSQL), and a virtual thread
         * closing its watch meanwhile would pin its carrier inside {@code synchronized} (JDK 21 to 23).
         */
        private final ReentrantLock lock = new ReentrantLock();
        private boolean closed;

        private Watch(Statement statement, long deadlineNanos) {
            this.statement = statement;
            this.deadlineNanos = deadlineNanos;
        }

        /** {@return true when the statement was cancelled (for an interrupt or the deadline)} */
        boolean cancelled() {
            return cancelled;
        }

        /** {@return true when it was cancelled because its deadline passed, not for an interrupt} */
        boolean deadlinePassed() {
            return deadlinePassed;
        }

        /** Runs on the watcher thread; exclusive with {@link #close()}, so no cancel is sent after it. */
        private void check(long now) {
            lock.lock();
            try {
                checkLocked(now);
            } finally {
                lock.unlock();
            }
        }

        /** With {@link #lock} held. */
        private void checkLocked(long now) {
            if (closed) {
                return;
            }
            if (cancelled) {
                // Still blocked after a cancel: it may have been sent before the statement
                // reached the server (the driver drops a cancel for a statement not yet running,
                // and a cancel request that arrives first cancels nothing), so send it again.
                // Harmless: a cancelled session is never reused.
                if (now - lastCancelNanos >= RESEND_NANOS) {
                    sendCancel(now);
                }
                return;
            }
            boolean interrupted = thread.isInterrupted();
            boolean late = deadlineNanos != Long.MAX_VALUE && now - deadlineNanos > 0;
            if (interrupted || late) {
                deadlinePassed = !interrupted;
                cancelled = true;
                sendCancel(now);
            }
        }

        private void sendCancel(long now) {
            lastCancelNanos = now;
            try {
                statement.cancel();
            } catch (SQLException | RuntimeException e) {
                log.debug("cancelling a blocked lock statement failed", e);
            }
        }

        /** Stops watching; once it returns, the statement is never cancelled by this watch. */
        @Override
        public void close() {
            lock.lock();
            try {
                closed = true;
                WATCHED.remove(this);
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Watches the statement the calling thread is about to block in.
     *
     * @param statement the statement
     * @param deadlineNanos a {@link System#nanoTime()} after which to cancel it, or
     *     {@link Long#MAX_VALUE} for none (the server times out by itself)
     * @return the watch; close it when the statement returned
     */
    static Watch watch(Statement statement, long deadlineNanos) {
        Watch w = new Watch(statement, deadlineNanos);
        WATCHED.add(w);
        Thread t = watcher;
        if (t == null) {
            t = startWatcher();
        }
        if (sleeping) {
            LockSupport.unpark(t); // only when parked for good: a polling watcher finds the watch itself
        }
        return w;
    }

    private static synchronized Thread startWatcher() {
        if (watcher == null) {
            Thread t = new Thread(CancelOnInterrupt::run, "kanuki-jdbc-cancel");
            t.setDaemon(true);
            t.start();
            watcher = t;
        }
        return watcher;
    }

    /**
     * Checks the watched statements every {@value #CHECK_MILLIS} ms; with nothing to watch for
     * {@value #LINGER_MILLIS} ms it parks until {@link #watch} wakes it. Lingering keeps a busy
     * lock from waking this thread (a context switch) on every wait.
     */
    private static void run() {
        long idleSince = System.nanoTime();
        while (true) {
            long now = System.nanoTime();
            if (WATCHED.isEmpty()) {
                if (now - idleSince > TimeUnit.MILLISECONDS.toNanos(LINGER_MILLIS)) {
                    // The flag is set before the last look, and watch() adds before it reads the
                    // flag: one of the two sees the other, so no watch is left unattended.
                    sleeping = true;
                    if (WATCHED.isEmpty()) {
                        LockSupport.park();
                    }
                    sleeping = false;
                    idleSince = System.nanoTime();
                    continue;
                }
            } else {
                idleSince = now;
                for (Watch w : WATCHED) {
                    w.check(now);
                }
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(CHECK_MILLIS));
        }
    }
}
