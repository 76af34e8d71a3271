package dev.kanuki.engine;

import dev.kanuki.Capabilities;
import dev.kanuki.DistributedLock;
import dev.kanuki.DistributedReadWriteLock;
import dev.kanuki.DistributedSemaphore;
import dev.kanuki.LeaseKind;
import dev.kanuki.LockNames;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockUri;
import dev.kanuki.spi.SafeNames;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The engine's {@link LockProvider}: one backend plus the engine's services around it (the
 * shared per-name gates, lease watchdog, release at close and at JVM exit through
 * {@link ExitRelease}).
 */
public final class EngineLockProvider implements LockProvider {
    private static final Logger log = LoggerFactory.getLogger(EngineLockProvider.class);
    private static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    private static final Duration DEFAULT_POLL = Duration.ofMillis(5);
    /**
     * How long {@link #close()} waits for backend calls in flight (a blocked wait it interrupted,
     * a grant on its way, a release) before it closes the backend anyway.
     */
    static final Duration CLOSE_BOUND = Duration.ofSeconds(10);

    final LockBackend backend;
    final String scope;
    final Duration lease;
    final long pollNanos;
    final WaitSlots waitSlots;
    private final String uri;
    private final Capabilities capabilities;
    private final Set<EngineHandle> live = ConcurrentHashMap.newKeySet();
    /** Acquisitions not yet answered, so that {@link #close()} can end them. */
    private final Set<Waiter> waiting = ConcurrentHashMap.newKeySet();
    /**
     * Backend work in flight that may end holding or releasing a grant: contentions (from the
     * moment a waiter is picked to contend until its grant is tracked or its request abandoned)
     * and releases. {@link #close()} waits for it to end before it closes the backend, so that no
     * grant is taken or released through closed connections.
     */
    private final AtomicInteger inFlight = new AtomicInteger();
    /** With {@link #drained}: what {@link #close()} waits on (a lock, so that a virtual thread's wait does not pin its carrier). */
    private final ReentrantLock drainLock = new ReentrantLock();
    /** Signalled when {@link #inFlight} drops to zero after {@link #close()} began. */
    private final Condition drained = drainLock.newCondition();
    private final LeaseWatchdog watchdog;
    private volatile boolean closed;
    /** The registered listeners, or null when there are none: the engine's one read per acquisition. */
    volatile EngineEvents events;
    /** Guards changes of {@link #events}. */
    private final Object listenersLock = new Object();
    /** The URI's scheme, which events carry. */
    private final String scheme;

    private EngineLockProvider(String uri, LockBackend backend, EngineOptions options) {
        LockUri parsed = LockUri.parse(uri);
        this.uri = parsed.redacted();
        this.scheme = parsed.scheme();
        this.backend = backend;
        this.capabilities = backend.capabilities();
        this.scope = backend.scope();
        this.lease = options.lease;
        this.pollNanos = options.poll.toNanos();
        this.waitSlots = new WaitSlots(options.waitThreads);
        this.watchdog = capabilities.leaseKind() == LeaseKind.IN_PROCESS ? null : new LeaseWatchdog(this);
    }

    /**
     * Opens a provider for a URI (see {@link LockProvider#open(String)}).
     *
     * @param uri the backend URI
     * @return the open provider
     */
    public static LockProvider open(String uri) {
        LockUri parsed = LockUri.parse(uri);
        EngineOptions options = EngineOptions.of(parsed);
        LockBackend backend = BackendRegistry.forScheme(parsed.scheme()).create(parsed);
        try {
            checkKeepStale(parsed, backend);
        } catch (RuntimeException e) {
            backend.close();
            throw e;
        }
        return register(new EngineLockProvider(uri, backend, options));
    }

    /**
     * Wraps a backend built by its module rather than from a URI (see
     * {@link dev.kanuki.spi.BackendProviders#open}, the public entry point) in the engine.
     *
     * @param description a URI-like text naming the backend; its {@code lease} and {@code poll}
     *     options are read, e.g. {@code postgresql:datasource?lease=10s}
     * @param backend the backend; the provider closes it when it closes (also when this throws)
     * @return the open provider
     * @throws IllegalArgumentException when the engine options are invalid
     */
    public static LockProvider open(String description, LockBackend backend) {
        try {
            LockUri parsed = LockUri.parse(description);
            EngineOptions options = EngineOptions.of(parsed);
            checkKeepStale(parsed, backend);
            return register(new EngineLockProvider(description, backend, options));
        } catch (RuntimeException | Error e) {
            backend.close();
            throw e;
        }
    }

    /**
     * {@code keepStale=true} asks the backend to leave stale locks for a person to inspect and
     * break; a backend that cannot (its capabilities say so) refuses it here, rather than break
     * them behind the user's back.
     */
    private static void checkKeepStale(LockUri parsed, LockBackend backend) {
        String value = parsed.params().get("keepStale");
        if (value == null || value.equals("false")) {
            return;
        }
        if (!value.equals("true")) {
            throw new IllegalArgumentException("keepStale=" + value + " in '" + parsed.redacted()
                    + "' is not true or false");
        }
        Capabilities capabilities = backend.capabilities();
        if (!capabilities.keepsStale()) {
            String why = switch (capabilities.leaseKind()) {
                case TTL -> parsed.scheme().equals("file")
                        ? "the queue strategy passes a dead or expired holder's turn on as part of every waiter's turn"
                        : "the server drops a lock whose lease ran out by itself";
                case SESSION -> "a lock ends with its holder's session, so none is left stale";
                default -> "its locks live in this JVM only";
            };
            throw new IllegalArgumentException("keepStale=true in '" + parsed.redacted() + "': this backend cannot "
                    + "keep stale locks (" + why + "); use file: with strategy mkdir, symlink, rename or create, "
                    + "or drop the option");
        }
    }

    private static EngineLockProvider register(EngineLockProvider provider) {
        ExitRelease.opened(provider);
        return provider;
    }

    /**
     * The options every URI may carry for the engine itself: {@code lease}, {@code poll} (the
     * longest pause between two attempts of a waiter that polls) and {@code waitThreads} (how
     * many waits may block in the backend at once, each holding a thread and, on a server, a
     * connection; default {@value WaitSlots#DEFAULT}).
     */
    private record EngineOptions(Duration lease, Duration poll, int waitThreads) {
        static EngineOptions of(LockUri parsed) {
            Duration lease = parsed.durationParam("lease", DEFAULT_LEASE);
            Duration poll = parsed.durationParam("poll", DEFAULT_POLL);
            int waitThreads = waitThreads(parsed);
            if (lease.compareTo(Duration.ofMillis(100)) < 0) {
                throw new IllegalArgumentException("lease=" + parsed.params().get("lease") + " in '" + parsed.redacted()
                        + "' is too short; use at least 100ms (the watchdog renews at a third of it)");
            }
            if (poll.isZero()) {
                throw new IllegalArgumentException("poll=0 in '" + parsed.redacted() + "' would spin; use e.g. poll=5ms");
            }
            return new EngineOptions(lease, poll, waitThreads);
        }

        private static int waitThreads(LockUri parsed) {
            String text = parsed.params().get("waitThreads");
            if (text == null) {
                return WaitSlots.DEFAULT;
            }
            try {
                int n = Integer.parseInt(text.trim());
                if (n >= 1 && n <= 10_000) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // reported below
            }
            throw new IllegalArgumentException("waitThreads=" + text + " in '" + parsed.redacted()
                    + "' is not a number from 1 to 10000 (waits blocked in the backend at once)");
        }
    }

    /** {@return the URI this provider was opened with, passwords masked} */
    @Override
    public String uri() {
        return uri;
    }

    @Override
    public Capabilities capabilities() {
        return capabilities;
    }

    @Override
    public DistributedLock lock(String name) {
        return new EngineLock(this, LockNames.validate(name), LockMode.EXCLUSIVE, 1);
    }

    @Override
    public DistributedReadWriteLock readWriteLock(String rawName) {
        String name = LockNames.validate(rawName);
        if (!capabilities.sharedLocks()) {
            throw new UnsupportedOperationException(uri + " has no shared (read) locks; use lock(name)");
        }
        EngineLock read = new EngineLock(this, name, LockMode.SHARED, 1);
        EngineLock write = new EngineLock(this, name, LockMode.EXCLUSIVE, 1);
        return new DistributedReadWriteLock() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public DistributedLock readLock() {
                return read;
            }

            @Override
            public DistributedLock writeLock() {
                return write;
            }
        };
    }

    @Override
    public DistributedSemaphore semaphore(String rawName, int permits) {
        String name = LockNames.validate(rawName);
        if (permits < 1) {
            throw new IllegalArgumentException("a semaphore needs at least 1 permit, got " + permits);
        }
        if (!capabilities.semaphores()) {
            throw new UnsupportedOperationException(uri + " has no semaphores");
        }
        return new EngineLock(this, name, LockMode.PERMIT, permits);
    }

    @Override
    public LockStatus status(String name) {
        checkOpen();
        return backend.status(LockNames.validate(name));
    }

    @Override
    public java.util.List<LockStatus> list() {
        checkOpen();
        return backend.list();
    }

    @Override
    public LockStatus breakLock(String name, boolean force) {
        checkOpen();
        return backend.breakLock(LockNames.validate(name), force);
    }

    @Override
    public java.util.List<String> prune(boolean dryRun) {
        checkOpen();
        return backend.prune(dryRun);
    }

    @Override
    public dev.kanuki.spi.WorkSpool spool() {
        checkOpen();
        dev.kanuki.spi.WorkSpool spool = backend.spool();
        if (spool == null) {
            throw new UnsupportedOperationException(uri + " keeps no spool of its own; use Spools.directory(DIR)"
                    + " on a directory every process sees");
        }
        return spool;
    }

    @Override
    public void addListener(dev.kanuki.LockListener listener) {
        java.util.Objects.requireNonNull(listener, "listener");
        synchronized (listenersLock) {
            events = EngineEvents.with(events, listener, scheme);
        }
    }

    @Override
    public void removeListener(dev.kanuki.LockListener listener) {
        synchronized (listenersLock) {
            events = EngineEvents.without(events, listener);
        }
    }

    /** {@return who holds the lock, when the backend can tell; never throws} */
    OwnerInfo holderOf(String name) {
        try {
            LockStatus status = backend.status(name);
            return status.isHeld() || status.state() == LockStatus.State.STALE ? status.owner().orElse(null) : null;
        } catch (RuntimeException e) {
            log.debug("could not read the holder of '{}'", SafeNames.printable(name), e);
            return null;
        }
    }

    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("lock provider " + uri + " is closed");
        }
    }

    /**
     * Records an acquisition that starts, so that {@link #close()} can end it. A waiter that
     * registers as the provider closes is ended here: either close sees it, or it sees close.
     */
    void register(Waiter w) {
        waiting.add(w);
        w.future.whenComplete((h, e) -> waiting.remove(w));
        if (closed) {
            w.future.completeExceptionally(closedWhileWaiting(w.request.name()));
        }
    }

    private IllegalStateException closedWhileWaiting(String name) {
        return new IllegalStateException("lock provider " + uri + " was closed while waiting for lock '"
                + SafeNames.printable(name) + "'");
    }

    /** Starts backend work that {@link #close()} must wait for (see {@link #inFlight}). */
    void beginBackendWork() {
        inFlight.incrementAndGet();
    }

    /** Ends what {@link #beginBackendWork()} started. */
    void endBackendWork() {
        if (inFlight.decrementAndGet() == 0 && closed) {
            drainLock.lock();
            try {
                drained.signalAll();
            } finally {
                drainLock.unlock();
            }
        }
    }

    /** {@return true when backend work in flight ended before {@code deadline} (nanoTime)} */
    private boolean awaitDrained(long deadline) {
        boolean interrupted = false;
        try {
            drainLock.lock();
            try {
                while (inFlight.get() > 0) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        return false;
                    }
                    try {
                        drained.awaitNanos(left);
                    } catch (InterruptedException e) {
                        // Closing must still release what it holds; keep the flag for the caller.
                        interrupted = true;
                    }
                }
                return true;
            } finally {
                drainLock.unlock();
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    void track(EngineHandle handle) {
        live.add(handle);
        if (watchdog != null && !closed) {
            watchdog.ensureRunning();
        }
    }

    void untrack(EngineHandle handle) {
        live.remove(handle);
    }

    /** {@return the handles currently open through this provider} */
    Iterable<EngineHandle> liveHandles() {
        return live;
    }

    /**
     * Closes in this order, so that nothing is held through this provider once it returns:
     * marks it closed (no new acquisition starts, no waiter gets a handle); ends every waiter
     * with an {@link IllegalStateException} (interrupting a thread blocked in the backend for
     * it, waking pauses); waits for contentions in flight to end, releasing a grant that arrives
     * for an ended waiter; releases every handle; waits for releases in flight; closes the
     * backend. Both waits together last at most {@link #CLOSE_BOUND}: a backend call that does
     * not end by then is cut off by closing the backend.
     */
    @Override
    public void close() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        long deadline = System.nanoTime() + CLOSE_BOUND.toNanos();
        ExitRelease.closed(this);
        if (watchdog != null) {
            watchdog.stop();
        }
        for (Waiter w : new ArrayList<>(waiting)) {
            w.future.completeExceptionally(closedWhileWaiting(w.request.name()));
        }
        boolean drainedInTime = awaitDrained(deadline);
        List<EngineHandle> handles = new ArrayList<>(live);
        for (EngineHandle handle : handles) {
            handle.close();
        }
        drainedInTime &= awaitDrained(deadline);
        if (!drainedInTime) {
            log.warn("closing {}: backend calls still running after {}s; closing the backend under them "
                    + "(a lock they take frees when its lease or session ends)", uri, CLOSE_BOUND.toSeconds());
        }
        backend.close();
    }

    @Override
    public String toString() {
        return "LockProvider[" + uri + "]";
    }
}
