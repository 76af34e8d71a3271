package dev.kanuki.engine;

import dev.kanuki.LockException;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
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
                deliveries.add(() -> deliver(w, handle));
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
            return w;
        }
        return null;
    }

    // ---------------------------------------------------------------- contending

    /**
     * Contends in the caller's own thread: the common case of a waiter that found the gate idle.
     * Blocking and polling both happen here, so a cross-process handoff costs no thread switch.
     */
    void contendInline(Waiter w) {
        contendOnWorker(contendUntilDone(w));
    }

    /** @return the next waiter to contend, once {@code w} has its answer */
    private Waiter contendUntilDone(Waiter w) {
        LockBackend backend = w.lock.provider.backend;
        try {
            while (true) {
                if (w.isDone()) {
                    return finish(w, null);
                }
                if (!backend.tryBeforeWait() && backend.blockingWait() && w.remainingNanos() > 0) {
                    // A blocking wait returns at once when the lock is free: no separate try first.
                    Optional<Grant> grant = backend.awaitAcquire(w.request, Duration.ofNanos(w.remainingNanos()));
                    if (grant.isPresent()) {
                        return finish(w, grant.get());
                    }
                    continue;
                }
                Optional<Grant> grant = backend.tryAcquire(w.request);
                if (grant.isPresent()) {
                    return finish(w, grant.get());
                }
                long remaining = w.remainingNanos();
                if (remaining <= 0) {
                    w.expire();
                    return finish(w, null);
                }
                if (backend.blockingWait()) {
                    grant = backend.awaitAcquire(w.request, Duration.ofNanos(remaining));
                    if (grant.isPresent()) {
                        return finish(w, grant.get());
                    }
                } else {
                    long pause = w.nextPauseNanos();
                    long until = System.nanoTime() + pause;
                    // Sleep in small slices so a cancelled waiter stops promptly.
                    while (!w.isDone() && System.nanoTime() < until) {
                        TimeUnit.NANOSECONDS.sleep(Math.min(until - System.nanoTime(), 20_000_000L));
                    }
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            w.future.completeExceptionally(new LockException("interrupted while waiting for lock '"
                    + dev.kanuki.LockNames.printable(w.request.name()) + "'", e));
            return finish(w, null);
        } catch (Throwable t) {
            w.future.completeExceptionally(t);
            return finish(w, null);
        }
    }

    /**
     * Contends for an asynchronous waiter: one quick attempt in the calling thread (often the
     * thread that just released the lock, so a local handoff costs no thread switch), then
     * blocking on a worker thread, or polling with pauses on the timer so no thread is parked.
     */
    void contendOnWorker(Waiter first) {
        Waiter w = first;
        while (w != null) {
            LockBackend backend = w.lock.provider.backend;
            Waiter current = w;
            try {
                if (current.isDone()) {
                    w = finish(current, null);
                    continue;
                }
                Optional<Grant> grant = backend.tryAcquire(current.request);
                if (grant.isPresent()) {
                    w = finish(current, grant.get());
                    continue;
                }
                if (current.remainingNanos() <= 0) {
                    current.expire();
                    w = finish(current, null);
                    continue;
                }
                if (backend.blockingWait()) {
                    EngineExecutors.workers().execute(() -> blockOnWorker(current));
                } else {
                    long pause = current.nextPauseNanos();
                    EngineExecutors.timer().schedule(
                            () -> EngineExecutors.workers().execute(() -> contendOnWorker(current)),
                            pause, TimeUnit.NANOSECONDS);
                }
                return;
            } catch (Throwable t) {
                current.future.completeExceptionally(t);
                w = finish(current, null);
            }
        }
    }

    private void blockOnWorker(Waiter w) {
        LockBackend backend = w.lock.provider.backend;
        Optional<Grant> grant = Optional.empty();
        Throwable failure = null;
        w.blockedIn(Thread.currentThread());
        try {
            if (!w.isDone()) {
                grant = backend.awaitAcquire(w.request, Duration.ofNanos(Math.max(0, w.remainingNanos())));
            }
        } catch (InterruptedException e) {
            // The waiter was cancelled or timed out; its future already says so.
        } catch (Throwable t) {
            failure = t;
        } finally {
            w.blockedIn(null);
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
            deliver(w, handle);
        } else {
            abandon(w);
        }
        deliveries.run();
        return next;
    }

    private static void abandon(Waiter w) {
        try {
            w.lock.provider.backend.abandon(w.request);
        } catch (RuntimeException e) {
            log.debug("backend failed to drop an abandoned request for '{}'",
                    dev.kanuki.LockNames.printable(w.request.name()), e);
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

    private static void deliver(Waiter w, EngineHandle handle) {
        handle.lock.provider.track(handle);
        if (!w.future.complete(handle)) {
            // The waiter gave up (timeout, cancel) while the grant was on its way.
            handle.close();
        }
    }

    // ---------------------------------------------------------------- releasing

    /** Releases a handle's share of the lock and lets the next waiter in. */
    void release(EngineHandle handle) {
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
            try {
                handle.lock.provider.backend.release(toRelease);
            } catch (RuntimeException e) {
                log.warn("releasing lock '{}' failed; it frees when its lease or session ends",
                        dev.kanuki.LockNames.printable(handle.name()), e);
            }
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

    private boolean isIdle() {
        return queue.isEmpty() && !contending && exclusiveHolder == null && shared == null && permitHolders == 0;
    }

    /** @return the waiters queued behind the contender, for diagnostics */
    synchronized int queued() {
        return queue.size();
    }
}
