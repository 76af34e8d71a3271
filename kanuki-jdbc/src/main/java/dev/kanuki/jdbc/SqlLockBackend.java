package dev.kanuki.jdbc;

import dev.kanuki.Capabilities;
import dev.kanuki.LeaseKind;
import dev.kanuki.LockBackendException;
import dev.kanuki.LockLostException;
import dev.kanuki.LockStatus;
import dev.kanuki.jdbc.LockKeys.LockKey;
import dev.kanuki.jdbc.SqlDialect.SpoiledSession;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.SafeNames;
import dev.kanuki.spi.TokenOnDemandGrant;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Locks held in a database server's own lock manager, by a session: PostgreSQL advisory locks,
 * MySQL/MariaDB user locks (the {@link SqlDialect} says which). The server frees a lock when its
 * session ends, so a crashed holder's lock frees at once, and the server wakes a waiter itself:
 * no polling.
 *
 * <p><b>One connection per held lock.</b> A session-level lock belongs to the connection, so a
 * held lock keeps its own connection until it is released; then the connection goes back to a
 * small idle pool ({@link SessionPool}). Losing the connection loses the lock: {@link #verify}
 * (which the engine's watchdog runs every second) then says so and the handle's {@code lost()}
 * completes. An idle connection found dead (the server restarted) is replaced once, at once.
 *
 * <p><b>Fencing and owners.</b> Acquiring runs the bare lock function and writes nothing. The
 * fencing token is issued when the holder first asks for it ({@link SqlGrant#fencingToken()}):
 * the name's row in the lock-record table goes to token + 1 in a committed write that happens
 * only while the session still holds the lock, so a token survives restarts and crashes of the
 * server and is never issued to a session that lost its lock. A lock whose holder does not use
 * fencing costs no write. Once a holder of a name has asked, later acquisitions of that name
 * in this backend issue the token in the acquisition's own round trip (the write gated by the
 * lock function in the same statement), until a holder releases without asking: names used with
 * fencing cost one round trip less, names used without cost nothing. Who holds a lock comes from
 * the session registrations: each connection records the process it works for once, when it is
 * opened, and {@link #status} looks up the session the server's lock table names. The first use
 * of a name in this backend makes sure the name has its row, so {@link #list} can name held
 * locks.
 *
 * <p><b>Server restarts.</b> A restarted server has forgotten the locks it granted, while their
 * holders learn of the loss only at their next check. For {@code restartGrace} after the server
 * started nothing is granted (see {@link #afterGrace}), so nobody is told they hold a lock that a
 * holder from before the restart still believes it holds.
 *
 * <p><b>Hash collisions (PostgreSQL).</b> Advisory locks take 64-bit keys, so two names can
 * share one. Such names exclude each other: never two holders at once, only unnecessary waiting.
 * They never share anything else: tokens and {@code verify} go by the full name's digest and
 * this session's own lock. A collision is detected when the second name's row is registered
 * next to the first's (the registration returns the other names on the key), by any process;
 * it is logged once per pair and kept in {@link #collisionsDetected()}.
 */
final class SqlLockBackend implements LockBackend {
    private static final Logger log = LoggerFactory.getLogger(SqlLockBackend.class);
    /** The socket read bound for statements that should answer at once. */
    static final int STATEMENT_TIMEOUT_MILLIS = 30_000;
    /** The socket read bound for {@link #verify}: a check that takes longer counts as a lost connection. */
    static final int VERIFY_TIMEOUT_MILLIS = 3_000;
    /**
     * What an acquisition's statements may take beyond the lock wait they ask the server for: a
     * server that stops answering (paused, a black hole) breaks the connection by about the
     * caller's deadline, not after {@link #STATEMENT_TIMEOUT_MILLIS}. Two seconds, so that a slow
     * answer on a loaded machine is not taken for a dead server.
     */
    static final long ACQUIRE_SLACK_MILLIS = 2_000;
    /** Permits tried per statement. */
    private static final int PERMITS_PER_STATEMENT = 32;
    private static final long FIRST_PERMIT_SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
    private static final long MAX_PERMIT_SLICE_NANOS = TimeUnit.SECONDS.toNanos(1);
    /**
     * Rows prune looks at per statement: on PostgreSQL each free one's lock is held by the
     * statement until it commits (a taker waits that long).
     */
    static final int PRUNE_BATCH = 100;

    private final SqlDialect dialect;
    private final SessionPool pool;
    private final LockKeys keys;
    private final String scope;
    private final Capabilities capabilities;
    private final Runnable onClose;
    private final Set<String> collisions = ConcurrentHashMap.newKeySet();
    /** Which names have their row, are used with fencing, are contended: round trips saved. */
    private final NameHistory names = new NameHistory();
    private final AtomicBoolean graceLogged = new AtomicBoolean();
    private final long fenceMarginNanos;

    /**
     * @param dialect the database's statements
     * @param pool where connections come from
     * @param keys how names map to keys
     * @param scope the identity of the lock store (no credentials)
     * @param onClose run once when the backend closes
     * @param fenceMargin how far the server clock must have passed a row's last token before
     *     {@link #prune} removes it: the clock step back that tokens survive
     */
    SqlLockBackend(SqlDialect dialect, SessionPool pool, LockKeys keys, String scope, Runnable onClose,
                   Duration fenceMargin) {
        this.dialect = dialect;
        this.fenceMarginNanos = fenceMargin.toNanos();
        this.pool = pool;
        this.keys = keys;
        this.scope = scope;
        this.onClose = onClose;
        this.capabilities = Capabilities.builder(LeaseKind.SESSION).crossProcess().sharedLocks(dialect.sharedLocks())
                .semaphores().persistentFencing().ownerRecords().build();
    }

    /**
     * A held lock: the session whose server-side lock it is. Unless it came with the acquisition,
     * its fencing token is issued on the first call to {@link #fencingToken()}, on that session,
     * under the grant's state lock, which release and verify also take: a token is never issued
     * while the grant is being released or checked.
     */
    final class SqlGrant extends TokenOnDemandGrant {
        final SqlSession session;
        final LockKey key;
        final LockMode mode;
        private final LockRequest request;

        SqlGrant(SqlSession session, LockKey key, LockMode mode, LockRequest request, OptionalLong eagerToken) {
            super(eagerToken);
            this.session = session;
            this.key = key;
            this.mode = mode;
            this.request = request;
        }

        @Override
        protected long issueToken() {
            OptionalLong issued;
            try {
                session.networkTimeout(STATEMENT_TIMEOUT_MILLIS);
                issued = dialect.issueToken(session, key, mode, request.owner());
            } catch (SQLException e) {
                if (session.failedConnection(e)) {
                    throw new LockLostException(key.name(), "the connection to " + pool.describe()
                            + " failed, and a session lock cannot outlive its connection: " + e.getMessage(), e);
                }
                throw failure("cannot issue a fencing token for '" + SafeNames.printable(key.name()) + "'", e);
            }
            if (issued.isEmpty()) {
                throw new LockLostException(key.name(), "the server no longer shows this session holding the lock;"
                        + " no fencing token was issued", null);
            }
            if (mode != LockMode.PERMIT) {
                names.fenced(key.recordId(), true); // its holders use fencing: issue with the acquisition from now on
            }
            return issued.getAsLong();
        }

        @Override
        protected String lockName() {
            return key.name();
        }

        @Override
        protected String storeName() {
            return dialect.product();
        }
    }

    @Override
    public boolean blockingWait() {
        return true;
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    @Override
    public String scope() {
        return scope;
    }

    /**
     * The engine leaves the choice to {@link #awaitAcquire}, which knows which names are
     * contended: a try first where that pays, the blocking statement at once where it does not.
     */
    @Override
    public boolean tryBeforeWait() {
        return false;
    }

    @Override
    public Optional<Grant> tryAcquire(LockRequest request) {
        try {
            return request.mode() == LockMode.PERMIT ? tryPermit(request) : acquire(request, keys.lock(request.name()), 0);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // a try never waits; keep the flag for the caller
            return Optional.empty();
        }
    }

    @Override
    public Optional<Grant> awaitAcquire(LockRequest request, Duration maxWait) throws InterruptedException {
        long nanos = saturatedNanos(maxWait);
        if (nanos <= 0) {
            return tryAcquire(request);
        }
        if (request.mode() == LockMode.PERMIT) {
            return awaitPermit(request, nanos);
        }
        // A name nobody has made us wait for lately is most likely free: the bare try is the
        // cheapest statement there is. A contended name goes straight to the blocking statement,
        // which the server answers when the holder leaves: no extra round trip per handoff.
        LockKey key = keys.lock(request.name());
        String id = key.recordId();
        long now = System.nanoTime();
        if (!names.isContended(id, now)) {
            Optional<Grant> free = acquire(request, key, 0);
            if (free.isPresent()) {
                names.free(id);
                return free;
            }
        }
        names.contended(id, now);
        long left = nanos - (System.nanoTime() - now);
        return left > 0 ? acquire(request, key, left) : Optional.empty();
    }

    private Optional<Grant> acquire(LockRequest request, LockKey key, long waitNanos) throws InterruptedException {
        for (int attempt = 0; ; attempt++) {
            SqlSession s = attempt == 0 ? pool.borrow() : pool.open();
            try {
                long wait = afterGrace(s, waitNanos);
                if (wait < 0) {
                    pool.giveBack(s);
                    return Optional.empty();
                }
                s.networkTimeout(acquisitionTimeoutMillis(wait));
                registerOnce(s, key);
                boolean fenced = names.isFenced(key.recordId());
                OptionalLong eagerToken = fenced ? dialect.lockAndIssue(s, key, request.mode(), request.owner(), wait)
                        : OptionalLong.empty();
                boolean locked = fenced ? eagerToken.isPresent() : dialect.lock(s, key, request.mode(), wait);
                if (!locked) {
                    pool.giveBack(s);
                    return Optional.empty();
                }
                return Optional.of(new SqlGrant(s, key, request.mode(), request, eagerToken));
            } catch (SpoiledSession e) {
                pool.discard(s);
                return Optional.empty();
            } catch (InterruptedException e) {
                pool.discard(s); // the lock may have been granted as the cancel arrived: end the session
                throw e;
            } catch (SQLException e) {
                // Not a server that stopped answering: a new connection would wait for it again.
                boolean diedWhileIdle = s.reused && s.failedConnection(e) && !timedOut(e);
                pool.discard(s);
                if (diedWhileIdle && attempt == 0) {
                    log.debug("an idle connection to {} had died; using a new one", pool.describe(), e);
                    continue;
                }
                throw failure("cannot lock '" + SafeNames.printable(request.name()) + "'", e);
            } catch (RuntimeException | Error e) {
                pool.discard(s);
                throw e;
            }
        }
    }

    // ---------------------------------------------------------------- semaphores

    /** A semaphore of n permits is n keys: one statement tries them in turn. */
    private Optional<Grant> tryPermit(LockRequest request) {
        List<LockKey> permits = new ArrayList<>(request.permits());
        for (int slot = 0; slot < request.permits(); slot++) {
            permits.add(keys.permit(request.name(), slot));
        }
        for (int attempt = 0; ; attempt++) {
            SqlSession s = attempt == 0 ? pool.borrow() : pool.open();
            try {
                if (s.graceLeftNanos() > 0) {
                    logGrace(s);
                    pool.giveBack(s);
                    return Optional.empty();
                }
                s.networkTimeout(STATEMENT_TIMEOUT_MILLIS);
                for (int from = 0; from < permits.size(); from += PERMITS_PER_STATEMENT) {
                    List<LockKey> chunk = permits.subList(from, Math.min(permits.size(), from + PERMITS_PER_STATEMENT));
                    int taken = dialect.tryPermits(s, chunk);
                    if (taken >= 0) {
                        return Optional.of(new SqlGrant(s, chunk.get(taken), LockMode.PERMIT, request, OptionalLong.empty()));
                    }
                }
                pool.giveBack(s);
                return Optional.empty();
            } catch (SQLException e) {
                boolean diedWhileIdle = s.reused && s.failedConnection(e) && !timedOut(e);
                pool.discard(s);
                if (diedWhileIdle && attempt == 0) {
                    continue;
                }
                throw failure("cannot take a permit of '" + SafeNames.printable(request.name()) + "'", e);
            } catch (RuntimeException | Error e) {
                pool.discard(s);
                throw e;
            }
        }
    }

    /**
     * No server can wait for "any one of n locks". The waiter blocks in the server on one
     * permit (woken at once when that one frees) and, in slices growing from 50 ms to 1 s, tries
     * all of them again and moves on to the next: at most one re-check per second per waiting
     * name and JVM, not a polling storm (the engine lets one thread per JVM wait per name).
     */
    private Optional<Grant> awaitPermit(LockRequest request, long waitNanos) throws InterruptedException {
        long deadline = System.nanoTime() + Math.min(waitNanos, Long.MAX_VALUE / 4);
        int slot = ThreadLocalRandom.current().nextInt(request.permits());
        long slice = FIRST_PERMIT_SLICE_NANOS;
        while (true) {
            Optional<Grant> grant = tryPermit(request);
            long remaining = deadline - System.nanoTime();
            if (grant.isPresent() || remaining <= 0) {
                return grant;
            }
            LockKey permit = keys.permit(request.name(), slot);
            SqlSession s = pool.borrow();
            try {
                long wait = afterGrace(s, Math.min(remaining, slice));
                if (wait > 0 && dialect.awaitPermit(s, permit, wait)) {
                    return Optional.of(new SqlGrant(s, permit, LockMode.PERMIT, request, OptionalLong.empty()));
                }
                pool.giveBack(s);
            } catch (SpoiledSession e) {
                pool.discard(s);
            } catch (InterruptedException e) {
                pool.discard(s);
                throw e;
            } catch (SQLException e) {
                boolean diedWhileIdle = s.reused && s.failedConnection(e);
                pool.discard(s);
                if (!diedWhileIdle) {
                    throw failure("cannot wait for a permit of '" + SafeNames.printable(request.name()) + "'", e);
                }
            } catch (RuntimeException | Error e) {
                pool.discard(s);
                throw e;
            }
            slot = (slot + 1) % request.permits();
            slice = Math.min(MAX_PERMIT_SLICE_NANOS, slice * 2);
        }
    }

    /**
     * The restart grace: a server that has just started knows nothing of the locks its previous
     * life granted, and their holders learn of the loss only at their next check (the engine
     * verifies every second; a check gives up after {@value #VERIFY_TIMEOUT_MILLIS} ms). Until
     * {@code restartGrace} has passed since the server started, nothing is granted, so nobody is
     * told they hold a lock while a holder from before the restart still believes it does.
     *
     * @return the wait left once the grace is over, or -1 when the grace outlasts the wait
     */
    /** {@return whether a statement failed because the server did not answer within the network timeout} */
    static boolean timedOut(SQLException e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.net.SocketTimeoutException || t instanceof java.sql.SQLTimeoutException
                    || String.valueOf(t.getMessage()).contains("Read timed out")) {
                return true;
            }
        }
        return false;
    }

    /** {@return the network timeout of an acquisition that asks the server to wait {@code waitNanos}} */
    static int acquisitionTimeoutMillis(long waitNanos) {
        return (int) Math.min(STATEMENT_TIMEOUT_MILLIS, TimeUnit.NANOSECONDS.toMillis(waitNanos) + ACQUIRE_SLACK_MILLIS);
    }

    private long afterGrace(SqlSession s, long waitNanos) throws InterruptedException {
        long grace = s.graceLeftNanos();
        if (grace == 0) {
            return waitNanos;
        }
        logGrace(s);
        if (grace > waitNanos) {
            if (waitNanos > 0) {
                TimeUnit.NANOSECONDS.sleep(waitNanos);
            }
            return -1;
        }
        TimeUnit.NANOSECONDS.sleep(grace);
        return waitNanos - grace;
    }

    private void logGrace(SqlSession s) {
        if (graceLogged.compareAndSet(false, true)) {
            log.info("{} started moments ago: no lock is granted for another {} ms (restartGrace), so that holders"
                    + " from before the restart notice their loss first", pool.describe(),
                    TimeUnit.NANOSECONDS.toMillis(s.graceLeftNanos()));
        }
    }

    // ---------------------------------------------------------------- holding

    @Override
    public void release(Grant grant) {
        SqlGrant g = (SqlGrant) grant;
        boolean reusable;
        g.stateLock().lock(); // a lock, not the grant's monitor: the unlock is a round trip (see TokenOnDemandGrant)
        try {
            if (g.isReleased()) {
                return;
            }
            g.markReleased();
            if (g.issuedEagerly() && !g.tokenAsked()) {
                names.fenced(g.key.recordId(), false); // this holder did not use it: back to tokens on demand
            }
            try {
                // Not answered in time, the connection is closed instead: that frees a session
                // lock as well, as soon as the server sees it closed; the caller is not held up.
                g.session.networkTimeout((int) ACQUIRE_SLACK_MILLIS);
                reusable = dialect.unlock(g.session, g.key, g.mode);
                if (!reusable) {
                    log.warn("lock '{}' was no longer held by its session when released on {}: it had been lost",
                            SafeNames.printable(g.key.name()), pool.describe());
                }
            } catch (SQLException e) {
                reusable = false; // the connection died, and the lock with it
            }
        } finally {
            g.stateLock().unlock();
        }
        if (reusable) {
            pool.giveBack(g.session);
        } else {
            pool.discard(g.session);
        }
    }

    @Override
    public boolean verify(Grant grant) {
        SqlGrant g = (SqlGrant) grant;
        g.stateLock().lock();
        try {
            if (g.isReleased()) {
                return false;
            }
            try {
                g.session.networkTimeout(VERIFY_TIMEOUT_MILLIS);
                return dialect.holds(g.session, g.key, g.mode == LockMode.PERMIT ? LockMode.EXCLUSIVE : g.mode);
            } catch (SQLException e) {
                if (g.session.failedConnection(e)) {
                    return false; // a session lock cannot outlive its connection
                }
                throw failure("cannot check lock '" + SafeNames.printable(g.key.name()) + "'", e);
            }
        } finally {
            g.stateLock().unlock();
        }
    }

    @Override
    public LockStatus status(String name) {
        LockKey key = keys.lock(name);
        return withSession("read the status of '" + SafeNames.printable(name) + "'", s -> dialect.status(s, key));
    }

    /**
     * Every lock with a record (every name ever locked through this table), with who holds it
     * now, from one query: the records joined with the server's lock table and the session
     * registrations.
     */
    @Override
    public List<LockStatus> list() {
        List<SqlDialect.Row> rows = withSession("list the locks", dialect::listRows);
        List<LockStatus> out = new ArrayList<>();
        for (SqlDialect.Row row : rows) {
            if (!keys.lock(row.name()).recordId().equals(row.id())) {
                continue; // a semaphore permit's record
            }
            if (row.held()) {
                out.add(new LockStatus(row.name(), LockStatus.State.HELD, Optional.ofNullable(row.holder()), row.token()));
            } else if (row.sharedHolders() > 0) {
                out.add(new LockStatus(row.name(), LockStatus.State.HELD_SHARED, Optional.empty(), row.token()));
            } else {
                out.add(new LockStatus(row.name(), LockStatus.State.FREE, Optional.ofNullable(row.lastTokenOwner()),
                        row.token()));
            }
        }
        return out;
    }

    /**
     * A database lock is freed by the server when its session ends, never by deleting anything,
     * so a lock is "broken" by ending the holder's session ({@code pg_terminate_backend},
     * {@code KILL CONNECTION}; the user needs the right to). Only with {@code force}: a held
     * session lock is never stale, its holder is alive as far as the server knows.
     */
    @Override
    public LockStatus breakLock(String name, boolean force) {
        LockStatus before = status(name);
        if (!before.isHeld()) {
            return before;
        }
        if (!force) {
            throw new IllegalStateException("lock '" + SafeNames.printable(name) + "' is held"
                    + before.owner().map(o -> " by " + o.describe()).orElse("") + " through a live database session; the"
                    + " server frees it the moment that session ends. Stop the holder, or use force to end its session");
        }
        LockKey key = keys.lock(name);
        withSession("end the sessions holding '" + SafeNames.printable(name) + "'", s -> {
            for (long session : dialect.holderSessions(s, key)) {
                if (!dialect.endSession(s, session)) {
                    log.warn("the server did not end session {} holding '{}' (gone already, or not allowed)", session,
                            SafeNames.printable(name));
                }
            }
            return null;
        });
        return before;
    }

    /**
     * Removes the rows of names whose lock nobody holds and whose last token the server clock has
     * passed by more than the fence margin (URI option {@code fenceMargin}, default 1 h). Every
     * row starts its tokens at the server clock in microseconds, so a row made again later starts
     * above every token the removed one issued, unless the server clock steps back by more than
     * the margin. Each row is deleted while prune holds its lock; a row whose lock is held,
     * shared or waited for stays.
     *
     * @return the rows removed ({@code dryRun}: the rows of free locks old enough to go, judged
     *     by this machine's clock)
     */
    @Override
    public List<String> prune(boolean dryRun) {
        List<String> removed = new ArrayList<>();
        long marginMicros = TimeUnit.NANOSECONDS.toMicros(fenceMarginNanos);
        if (dryRun) {
            long oldEnough = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis()) - marginMicros;
            for (SqlDialect.Row row : withSession("list the lock records", dialect::listRows)) {
                if (!row.held() && row.sharedHolders() == 0 && row.token() < oldEnough) {
                    removed.add(describeRow(row.name()));
                }
            }
            return removed;
        }
        String after = "";
        while (after != null) {
            String from = after;
            SqlDialect.PruneBatch batch = withSession("prune the lock records",
                    s -> dialect.pruneBatch(s, from, PRUNE_BATCH, marginMicros));
            batch.removed().forEach(name -> removed.add(describeRow(name)));
            after = batch.lastId();
        }
        // Rows this backend registered may be gone: register them again on their next use.
        names.forgetRegistrations();
        log.debug("pruned {} rows of free locks from {} on {}", removed.size(), dialect.table, pool.describe());
        return removed;
    }

    private String describeRow(String name) {
        return dialect.table + " row of '" + SafeNames.printable(name) + "'";
    }

    /** Runs a non-locking statement on a pooled session, replacing a session that died idle once. */
    private <T> T withSession(String what, SessionWork<T> work) {
        for (int attempt = 0; ; attempt++) {
            SqlSession s = attempt == 0 ? pool.borrow() : pool.open();
            try {
                s.networkTimeout(STATEMENT_TIMEOUT_MILLIS);
                T result = work.run(s);
                pool.giveBack(s);
                return result;
            } catch (SQLException e) {
                boolean diedWhileIdle = s.reused && s.failedConnection(e);
                pool.discard(s);
                if (diedWhileIdle && attempt == 0) {
                    continue;
                }
                throw failure("cannot " + what, e);
            } catch (RuntimeException | Error e) {
                pool.discard(s);
                throw e;
            }
        }
    }

    private interface SessionWork<T> {
        T run(SqlSession s) throws SQLException;
    }

    /**
     * Makes sure the name has its row (see {@link SqlDialect#registerName}), once per name and
     * minute (another process's prune may have removed it).
     */
    private void registerOnce(SqlSession s, LockKey key) throws SQLException {
        long now = System.nanoTime();
        if (names.isRegistered(key.recordId(), now)) {
            return;
        }
        String others = dialect.registerName(s, key);
        reportCollision(key, others);
        names.registered(key.recordId(), now);
    }

    /** {@return the pairs of names found sharing one key, as {@code "a" + '\n' + "b"} (sorted)} */
    Set<String> collisionsDetected() {
        return Collections.unmodifiableSet(collisions);
    }

    private void reportCollision(LockKey key, String otherNames) {
        if (otherNames == null || otherNames.isEmpty()) {
            return;
        }
        for (String other : otherNames.split("\n")) {
            if (other.equals(key.name())) {
                continue;
            }
            String pair = key.name().compareTo(other) < 0 ? key.name() + "\n" + other : other + "\n" + key.name();
            if (collisions.add(pair)) {
                log.warn("lock names '{}' and '{}' map to the same {} lock key {} on {}: they exclude each other"
                        + " (safe: never two holders; but one waits for the other). Fencing tokens and owner records"
                        + " stay separate. Rename one of them to end the waiting.", SafeNames.printable(key.name()),
                        SafeNames.printable(other), dialect.product(), key.key(), pool.describe());
            }
        }
    }

    @Override
    public void close() {
        pool.close();
        onClose.run();
    }

    private LockBackendException failure(String what, SQLException e) {
        return new LockBackendException(what + " on " + pool.describe() + ": " + e.getMessage(),
                "check that the server is up and the user may use " + dialect.table, e);
    }

    private static long saturatedNanos(Duration d) {
        if (d.isNegative()) {
            return 0;
        }
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 4;
        }
    }
}
