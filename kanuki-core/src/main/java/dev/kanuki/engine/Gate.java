package dev.kanuki.engine;

import dev.kanuki.LockException;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.SafeNames;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The in-JVM queue for one lock name on one lock store. Threads of one JVM never race each
 * other on the backend: waiters queue here first come, first served, and only the waiter at the
 * head contends on the backend, and only when no local holder excludes it. Shared (read)
 * holders of one backend share a single backend grant. This is also what keeps
 * {@code FileChannel} from throwing {@code OverlappingFileLockException}: one JVM never asks the
 * OS for a lock it already holds.
 *
 * <p>All state is guarded by the gate's monitor; backend calls are always made outside it.
 */
final class Gate {
    private static final Logger log = LoggerFactory.getLogger(Gate.class);

    private final GateTable table;
    final String key;
    private final ArrayDeque<Waiter> queue = new ArrayDeque<>();
    /** True while one waiter is contending on the backend. */
    private boolean contending;
    private EngineHandle exclusiveHolder;
    private SharedGrant shared;
    private int permitHolders;
    private boolean retired;

    Gate(GateTable table, String key) {
        this.table = table;
        this.key = key;
    }

    /** The backend grant that all local shared holders of one backend hold together. */
    static final class SharedGrant {
        final LockBackend backend;
        final Grant grant;
        int holders;
        boolean releasing;

        SharedGrant(LockBackend backend, Grant grant) {
            this.backend = backend;
            this.grant = grant;
        }
    }

    /** Handles to hand out once the monitor is released; allocates only when there are some. */
    private static final class Deliveries {
        private List<Runnable> pending;

        void add(Runnable delivery) {
            if (pending == null) {
                pending = new ArrayList<>(2);
            }
            pending.add(delivery);
        }

        boolean isEmpty() {
            return pending == null;
        }

        void run() {
            if (pending != null) {
                pending.forEach(Runnable::run);
            }
        }
    }

    // ---------------------------------------------------------------- entering

    /** What {@link #enter} decided. */
    enum Entry { RETIRED, CONTEND_NOW, QUEUED, SERVED }

    /**
     * Queues a waiter. When it can contend at once it becomes the contender and the caller must
     * run {@link #contendInline} or {@link #contendOnWorker}.
     */
    Entry enter(Waiter w) {
        Deliveries deliveries = new Deliveries();
        Entry entry;
        synchronized (this) {
            if (retired) {
                return Entry.RETIRED;
            }
            queue.add(w);
            Waiter next = nextContender(deliveries);
            if (next == w) {
                entry = Entry.CONTEND_NOW;
            } else if (next != null) {
                // Cannot happen: a waiter other than the newcomer could have started before.
                throw new IllegalStateException("gate out of order for " + key);
            } else {
                entry = deliveries.isEmpty() ? Entry.QUEUED : Entry.SERVED;
            }
        }
        deliveries.run();
        return entry;
    }

    /**
     * Picks the next waiter allowed to contend, serving shared waiters that can join a local
     * shared grant at once. Called with the monitor held.
     */
    private Waiter nextContender(Deliveries deliveries) {
        while (!contending) {
            Waiter w = queue.peek();
            if (w == null) {
                return null;
            }
            if (w.isDone()) {
                queue.poll();
                continue;
            }
            LockMode mode = w.request.mode();
            if (mode == LockMode.SHARED && shared != null) {
                if (shared.releasing || shared.backend != w.lock.provider.backend) {
                    return null;
                }
                queue.poll();
                shared.holders++;
                EngineHandle handle = new EngineHandle(this, w.lock, shared.grant, shared);
                deliveries.add(() -> deliver(w, handle, false));
                continue;
            }
            boolean free = switch (mode) {
                case EXCLUSIVE -> exclusiveHolder == null && shared == null;
                case SHARED -> exclusiveHolder == null;
                case PERMIT -> true;
            };
            if (!free) {
                return null;
            }
            queue.poll();
            contending = true;
            // Counted until its grant is tracked or its request dropped: the provider's close
            // waits for it, so a grant never arrives through a closed backend.
            w.lock.provider.beginBackendWork();
            return w;
        }
        return null;
    }

    // ---------------------------------------------------------------- contending

    /**
     * Contends in the caller's own thread (a synchronous acquisition): blocking and pausing both
     * happen here, so a cross-process handoff costs no thread switch.
     */
    void contendInline(Waiter w) {
        Waiter next = rounds(w, true);
        if (next != null && Thread.currentThread().isInterrupted()) {
            // The caller was interrupted: its thread would break the next waiter's backend calls
            // (an interruptible channel closes), so the next waiter contends on a worker.
            EngineExecutors.workers().execute(() -> contendOnWorker(next));
        } else {
            contendOnWorker(next);
        }
    }

    /**
     * Contends for asynchronous waiters, starting with {@code first}: one attempt in the calling
     * thread (often the thread that just released the lock, so a local handoff costs no thread
     * switch); when the lock is busy the waiter blocks on a bounded blocking thread or parks
     * without a thread until a timer or a change notification resumes it. Never blocks.
     */
    void contendOnWorker(Waiter first) {
        Waiter w = first;
        while (w != null) {
            w = rounds(w, false);
        }
    }

    /**
     * Attempts for {@code w} until it has its answer or, when not {@code inline}, until it is
     * parked or handed to a blocking thread.
     *
     * @return the next waiter that may contend once {@code w} has its answer, which the caller
     *     must run; null when there is none or {@code w} still waits
     */
    private Waiter rounds(Waiter w, boolean inline) {
        EngineLockProvider provider = w.lock.provider;
        LockBackend backend = provider.backend;
        WaitSlots slots = provider.waitSlots;
        try {
            while (true) {
                if (w.isDone()) {
                    return finish(w, null);
                }
                boolean blocking = backend.blockingWait();
                if (inline && blocking && !backend.tryBeforeWait() && w.remainingNanos() > 0 && slots.tryTake()) {
                    // A blocking wait returns at once when the lock is free: no separate try first.
                    Optional<Grant> grant = blockInSlot(w, backend, slots);
                    if (grant.isPresent()) {
                        return finish(w, grant.get());
                    }
                    continue;
                }
                Optional<Grant> grant = backend.tryAcquire(w.request);
                if (grant.isPresent()) {
                    return finish(w, grant.get());
                }
                w.afterFailedAttempt();
                if (w.remainingNanos() <= 0) {
                    w.expire();
                    return finish(w, null);
                }
                if (blocking && slots.tryTake()) {
                    if (!inline) {
                        EngineExecutors.blockers().execute(() -> blockOnWorker(w));
                        return null;
                    }
                    grant = blockInSlot(w, backend, slots);
                    if (grant.isPresent()) {
                        return finish(w, grant.get());
                    }
                    continue;
                }
                if (w.subscribeOnce(backend)) {
                    // One more attempt, so that a change just before subscribing is not missed. An
                    // asynchronous waiter makes it on a worker: enqueuing costs its caller one
                    // attempt, however many waiters it enqueues.
                    if (inline) {
                        continue;
                    }
                    EngineExecutors.workers().execute(() -> contendOnWorker(w));
                    return null;
                }
                if (blocking) {
                    slots.lineUpForSlot(w);
                }
                long pause = w.nextPauseNanos(slots);
                if (inline) {
                    w.pauseInline(pause);
                } else if (w.park(pause)) {
                    return null;
                }
            }
        } catch (InterruptedException e) {
            w.future.completeExceptionally(interrupted(w, e));
            try {
                return finish(w, null); // drops the waiter's place without the interrupt breaking that
            } finally {
                Thread.currentThread().interrupt(); // as acquire documents
            }
        } catch (Throwable t) {
            if (inline && Thread.currentThread().isInterrupted()) {
                // The caller's interrupt broke a backend call (an interruptible channel closed):
                // report it as the interrupt it is, as acquire documents.
                InterruptedException cause = new InterruptedException("interrupted in the backend");
                cause.addSuppressed(t);
                w.future.completeExceptionally(interrupted(w, cause));
            } else {
                w.future.completeExceptionally(t);
            }
            return finish(w, null);
        }
    }

    private static LockException interrupted(Waiter w, InterruptedException e) {
        return new LockException("interrupted while waiting for lock '" + SafeNames.printable(w.request.name()) + "'", e);
    }

    /** A blocking wait in the calling thread, in a slot the caller has taken. */
    private static Optional<Grant> blockInSlot(Waiter w, LockBackend backend, WaitSlots slots)
            throws InterruptedException {
        try {
            if (!w.blockedIn(Thread.currentThread())) {
                return Optional.empty(); // ended meanwhile; the caller's loop sees it
            }
            try {
                return backend.awaitAcquire(w.request, Duration.ofNanos(Math.max(0, w.remainingNanos())));
            } catch (InterruptedException e) {
                if (w.interruptedByEngine()) {
                    return Optional.empty(); // the engine ended the wait (provider closed); not the caller's interrupt
                }
                throw e;
            } finally {
                w.unblocked();
            }
        } finally {
            slots.give();
        }
    }

    /** A blocking wait on a blocking thread, in a slot taken for it. */
    private void blockOnWorker(Waiter w) {
        LockBackend backend = w.lock.provider.backend;
        Optional<Grant> grant = Optional.empty();
        Throwable failure = null;
        try {
            if (w.blockedIn(Thread.currentThread())) {
                grant = backend.awaitAcquire(w.request, Duration.ofNanos(Math.max(0, w.remainingNanos())));
            }
        } catch (InterruptedException e) {
            // The waiter was cancelled or timed out; its future already says so.
        } catch (Throwable t) {
            failure = t;
        } finally {
            w.unblocked();
            w.lock.provider.waitSlots.give();
            Thread.interrupted(); // a cancel that raced the return must not leak into the pool
        }
        if (failure != null) {
            w.future.completeExceptionally(failure);
            contendOnWorker(finish(w, null));
        } else if (grant.isPresent()) {
            contendOnWorker(finish(w, grant.get()));
        } else {
            // Timed out or cancelled, or a spurious wake-up: go round again (it checks both).
            contendOnWorker(w);
        }
    }

    /**
     * Ends the current contention: records the grant (or nothing), hands the handle to the
     * waiter, and returns the next waiter that may contend, which the caller must run.
     */
    private Waiter finish(Waiter w, Grant grant) {
        EngineHandle handle = null;
        WaitSlots slots = w.lock.provider.waitSlots;
        w.stopWaiting(slots);
        if (grant != null && w.lock.provider.backend.blockingWait()) {
            slots.wakeNextIfFree();
        }
        Deliveries deliveries = new Deliveries();
        Waiter next;
        synchronized (this) {
            contending = false;
            if (grant != null) {
                handle = recordHolder(w, grant);
            }
            next = nextContender(deliveries);
        }
        if (handle != null) {
            deliver(w, handle, true);
        } else {
            try {
                abandon(w);
            } finally {
                w.lock.provider.endBackendWork();
            }
        }
        deliveries.run();
        return next;
    }

    private static void abandon(Waiter w) {
        boolean interrupted = Thread.interrupted();
        try {
            w.lock.provider.backend.abandon(w.request);
        } catch (RuntimeException e) {
            log.debug("backend failed to drop an abandoned request for '{}'",
                    SafeNames.printable(w.request.name()), e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private EngineHandle recordHolder(Waiter w, Grant grant) {
        switch (w.request.mode()) {
            case EXCLUSIVE -> {
                EngineHandle handle = new EngineHandle(this, w.lock, grant, null);
                exclusiveHolder = handle;
                return handle;
            }
            case SHARED -> {
                shared = new SharedGrant(w.lock.provider.backend, grant);
                shared.holders = 1;
                return new EngineHandle(this, w.lock, grant, shared);
            }
            case PERMIT -> {
                permitHolders++;
                return new EngineHandle(this, w.lock, grant, null);
            }
            default -> throw new IllegalStateException();
        }
    }

    /**
     * Hands a handle to its waiter. Completing the future runs the waiter's callbacks, which
     * often release the lock at once and so hand it to the next waiter from inside this call:
     * past a small depth the handoff continues on a worker thread instead, so a long line of
     * waiters never grows one thread's stack.
     */
    private static void deliver(Waiter w, EngineHandle handle, boolean contended) {
        int[] depth = DELIVERY_DEPTH.get();
        if (depth[0] >= MAX_DELIVERY_DEPTH) {
            EngineExecutors.workers().execute(() -> deliver(w, handle, contended));
            return;
        }
        depth[0]++;
        try {
            deliverNow(w, handle, contended);
        } finally {
            depth[0]--;
        }
    }

    private static final ThreadLocal<int[]> DELIVERY_DEPTH = ThreadLocal.withInitial(() -> new int[1]);
    /** Handoffs nested in one thread's callbacks before the next moves to a worker thread. */
    private static final int MAX_DELIVERY_DEPTH = 4;

    /**
     * @param contended true when the handle comes from this waiter's contention, which the
     *     provider counts as backend work in flight until the handle is tracked
     */
    private static void deliverNow(Waiter w, EngineHandle handle, boolean contended) {
        EngineLockProvider provider = handle.lock.provider;
        EngineEvents.Acquisition events = w.events;
        boolean acquiredEvent = events != null && events.claimAcquired();
        if (acquiredEvent) {
            handle.events = events; // before tracking publishes the handle to other threads
        }
        provider.track(handle);
        if (contended) {
            // Tracked: from here the provider's close releases it. Ended before the future
            // completes, because its callbacks may close the provider, which waits for this.
            provider.endBackendWork();
        }
        if (acquiredEvent) {
            events.fireAcquired(); // before the waiter's callbacks, which may release at once
        }
        if (!w.future.complete(handle)) {
            // The waiter gave up (timeout, cancel, provider closed) while the grant was on its way.
            handle.close();
        }
    }

    // ---------------------------------------------------------------- releasing

    /** Releases a handle's share of the lock and lets the next waiter in. */
    void release(EngineHandle handle) {
        Grant toRelease;
        try {
            toRelease = releaseOnBackend(handle);
        } finally {
            // Begun by the handle's close; ended before any waiter is served, whose callbacks
            // may close the provider, which waits for this.
            handle.lock.provider.endBackendWork();
        }
        Deliveries deliveries = new Deliveries();
        Waiter next;
        synchronized (this) {
            if (handle.shared != null) {
                if (toRelease != null && shared == handle.shared) {
                    shared = null;
                }
            } else if (handle.lock.mode == LockMode.PERMIT) {
                permitHolders--;
            } else if (exclusiveHolder == handle) {
                exclusiveHolder = null;
            }
            next = nextContender(deliveries);
            if (next == null && isIdle()) {
                retired = table.retireIfCrowded(this);
            }
        }
        deliveries.run();
        if (next != null) {
            contendOnWorker(next);
        }
    }

    /**
     * Drops the handle's share of the grant and releases the grant on the backend when no local
     * holder shares it any more.
     *
     * @return the grant released, or null when other shared holders keep it
     */
    private Grant releaseOnBackend(EngineHandle handle) {
        Grant toRelease;
        synchronized (this) {
            if (handle.shared != null) {
                SharedGrant s = handle.shared;
                s.holders--;
                if (s.holders == 0) {
                    s.releasing = true;
                    toRelease = s.grant;
                } else {
                    toRelease = null;
                }
            } else {
                toRelease = handle.grant;
            }
        }
        // Release on the backend before letting a local waiter contend: the OS must not see this
        // JVM ask for a lock it still holds.
        if (toRelease != null) {
            // An interrupted caller (try-with-resources after an interrupt) must still release:
            // its interrupt would close an interruptible channel under the release and leave the
            // lock held until its lease ran out. The flag is set again after.
            boolean interrupted = Thread.interrupted();
            try {
                handle.lock.provider.backend.release(toRelease);
            } catch (RuntimeException e) {
                log.warn("releasing lock '{}' failed; it frees when its lease or session ends",
                        SafeNames.printable(handle.name()), e);
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        return toRelease;
    }

    private boolean isIdle() {
        return queue.isEmpty() && !contending && exclusiveHolder == null && shared == null && permitHolders == 0;
    }

    /** {@return the waiters queued behind the contender, for diagnostics} */
    synchronized int queued() {
        return queue.size();
    }
}
