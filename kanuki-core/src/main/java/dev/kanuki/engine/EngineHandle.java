package dev.kanuki.engine;

import dev.kanuki.LockHandle;
import dev.kanuki.LockLostException;
import dev.kanuki.spi.Durations;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.SafeNames;
import java.time.Duration;
import java.util.OptionalLong;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** A held lock as the engine tracks it. */
final class EngineHandle implements LockHandle {
    private static final Logger log = LoggerFactory.getLogger(EngineHandle.class);
    private static final int HELD = 0;
    private static final int LOST = 1;
    private static final int CLOSED = 2;

    final Gate gate;
    final EngineLock lock;
    final Grant grant;
    /** Non-null for shared holders: the backend grant they hold together. */
    final Gate.SharedGrant shared;
    private final AtomicInteger state = new AtomicInteger(HELD);
    /** A cheap hash for the provider's set of live handles (an identity hash costs more). */
    private final int hash = java.util.concurrent.ThreadLocalRandom.current().nextInt();
    private volatile CompletableFuture<LockLostException> lost;
    private volatile LockLostException lostReason;
    /** Lease bookkeeping for the watchdog, in System.nanoTime() terms. */
    volatile long lastConfirmedNanos = System.nanoTime();
    /** Why the last renewal failed, when it did (cleared by a confirmed one): named when the lease runs out. */
    volatile RuntimeException lastRenewalFailure;
    /** The end of a maximum hold, when the lock has one; cancelled by close. */
    private volatile ScheduledFuture<?> holdLimit;
    /** The thread a passed maximum hold interrupts (set by the acquiring thread, when asked for). */
    private volatile Thread holder;
    /** The events of the acquisition, when listeners were registered as it started; else null. */
    volatile EngineEvents.Acquisition events;
    /** Why the engine closed this handle itself (a passed maximum hold): what verify() says after it. */
    private volatile LockLostException closedByEngine;

    EngineHandle(Gate gate, EngineLock lock, Grant grant, Gate.SharedGrant shared) {
        this.gate = gate;
        this.lock = lock;
        this.grant = grant;
        this.shared = shared;
        if (lock.maxHoldNanos > 0) {
            startHoldLimit(lock.maxHoldNanos);
        }
    }

    /** The timer only schedules: the release, a backend call, runs on a worker. */
    private void startHoldLimit(long nanos) {
        holdLimit = EngineExecutors.timer().schedule(
                () -> EngineExecutors.workers().execute(this::maxHoldPassed), nanos, TimeUnit.NANOSECONDS);
    }

    /** Names the thread to interrupt when the maximum hold passes. */
    void heldBy(Thread thread) {
        holder = thread;
        if (closedByEngine != null) {
            thread.interrupt(); // the maximum hold passed before the acquiring thread got here
        }
    }

    /**
     * The maximum hold passed: the handle is lost (no more renewals, {@code lost()} completes),
     * the holding thread is interrupted when asked for, and the lock is released.
     */
    private void maxHoldPassed() {
        if (state.get() == CLOSED) {
            return;
        }
        LockLostException reason = new LockLostException(lock.name, "its maximum hold of "
                + Durations.format(Duration.ofNanos(lock.maxHoldNanos)) + " passed; kanuki released it", null);
        closedByEngine = reason;
        markLost(reason);
        closeNow(() -> {
            Thread t = holder;
            if (lock.interruptHolder && t != null) {
                t.interrupt(); // only when this call closed the handle: its holder had not let go yet
            }
        });
    }

    @Override
    public String name() {
        return lock.name;
    }

    @Override
    public long fencingToken() {
        return grant.fencingToken();
    }

    @Override
    public boolean isHeld() {
        return state.get() == HELD;
    }

    @Override
    public void verify() {
        int s = state.get();
        if (s == CLOSED) {
            LockLostException byEngine = closedByEngine;
            throw byEngine != null ? byEngine : new LockLostException(lock.name, "the handle was closed", null);
        }
        if (s == LOST) {
            throw lostReason;
        }
        if (!lock.provider.backend.verify(grant)) {
            LockLostException e = new LockLostException(lock.name,
                    "the backend no longer records this holder (" + lock.provider.uri() + ")", null);
            markLost(e);
            throw e;
        }
        lastConfirmedNanos = System.nanoTime();
    }

    @Override
    public CompletableFuture<LockLostException> lost() {
        return lostFuture().copy();
    }

    private CompletableFuture<LockLostException> lostFuture() {
        CompletableFuture<LockLostException> f = lost;
        if (f == null) {
            synchronized (this) {
                if (lost == null) {
                    lost = new CompletableFuture<>();
                    if (state.get() == LOST || lostReason != null) {
                        lost.complete(lostReason);
                    }
                }
                f = lost;
            }
        }
        return f;
    }

    /** Marks the lock lost (once) and completes {@link #lost()}. */
    void markLost(LockLostException reason) {
        synchronized (this) {
            if (!state.compareAndSet(HELD, LOST)) {
                return;
            }
            lostReason = reason;
        }
        log.warn("{}", reason.getMessage());
        lostFuture().complete(reason);
        EngineEvents.Acquisition ev = events;
        if (ev != null) {
            ev.lost(reason);
        }
    }

    @Override
    public void close() {
        closeNow(null);
    }

    /**
     * Closes the handle once, whoever asks first.
     *
     * @param beforeRelease run after this call closed the handle, before the backend release; may be null
     */
    private void closeNow(Runnable beforeRelease) {
        EngineLockProvider provider = lock.provider;
        // Counted before the state changes: a provider close that finds this handle already
        // closed by another thread then waits for that thread's release before closing the backend.
        provider.beginBackendWork();
        int s = state.get();
        while (s != CLOSED) {
            if (state.compareAndSet(s, CLOSED)) {
                ScheduledFuture<?> limit = holdLimit;
                if (limit != null) {
                    limit.cancel(false);
                }
                provider.untrack(this);
                if (beforeRelease != null) {
                    beforeRelease.run();
                }
                gate.release(this); // ends the backend work once the backend released
                EngineEvents.Acquisition ev = events;
                if (ev != null) {
                    ev.released();
                }
                return;
            }
            s = state.get();
        }
        provider.endBackendWork();
    }

    @Override
    public int hashCode() {
        return hash;
    }

    @Override
    public boolean equals(Object other) {
        return this == other;
    }

    @Override
    public String toString() {
        OptionalLong token = grant.issuedToken();
        return "LockHandle[" + SafeNames.printable(lock.name) + (token.isPresent() ? ", token " + token.getAsLong() : "")
                + (isHeld() ? ", held" : ", not held") + "]";
    }
}
