package dev.kanuki.engine;

import dev.kanuki.LockEvent;
import dev.kanuki.LockHandle;
import dev.kanuki.LockListener;
import dev.kanuki.LockLostException;
import dev.kanuki.LockTimeoutException;
import dev.kanuki.spi.SafeNames;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The listeners of one provider at one moment (immutable: registering one makes a new instance,
 * which the provider publishes through one volatile field, read once per acquisition). Each
 * acquisition started while listeners exist gets an {@link Acquisition}, which keeps the
 * listeners it started with and fires its events, each once.
 */
final class EngineEvents {
    private static final Logger log = LoggerFactory.getLogger(EngineEvents.class);
    private static final AtomicLong NEXT_ACQUISITION = new AtomicLong();

    private final LockListener[] listeners;
    private final String scheme;

    private EngineEvents(LockListener[] listeners, String scheme) {
        this.listeners = listeners;
        this.scheme = scheme;
    }

    /** {@return these listeners and one more} */
    static EngineEvents with(EngineEvents current, LockListener listener, String scheme) {
        LockListener[] old = current == null ? new LockListener[0] : current.listeners;
        LockListener[] now = Arrays.copyOf(old, old.length + 1);
        now[old.length] = listener;
        return new EngineEvents(now, scheme);
    }

    /** {@return these listeners without one registration of {@code listener}; null when none is left} */
    static EngineEvents without(EngineEvents current, LockListener listener) {
        if (current == null) {
            return null;
        }
        LockListener[] old = current.listeners;
        for (int i = 0; i < old.length; i++) {
            if (old[i] == listener) {
                if (old.length == 1) {
                    return null;
                }
                LockListener[] now = new LockListener[old.length - 1];
                System.arraycopy(old, 0, now, 0, i);
                System.arraycopy(old, i + 1, now, i, old.length - i - 1);
                return new EngineEvents(now, current.scheme);
            }
        }
        return current;
    }

    /**
     * Starts the events of a waiter's acquisition: fires {@code WAITING} in the calling thread.
     * The caller then calls {@link Acquisition#watchOutcome()} once its call has done what it
     * does at once (a failed outcome is reported from there, or when it comes later).
     */
    Acquisition waiting(Waiter w, long startNanos) {
        Acquisition a = new Acquisition(this, w, startNanos);
        LockEvent event = a.event(LockEvent.Kind.WAITING, 0, 0, null);
        LockListener[] targets = listeners;
        for (int i = 0; i < listeners.length; i++) {
            LockListener listener = listeners[i];
            LockListener target;
            try {
                target = listener.onWaiting(event);
            } catch (RuntimeException | LinkageError e) {
                log.warn("lock listener {} failed on {}", listener, event, e);
                target = listener;
            }
            if (target != listener) {
                if (targets == listeners) {
                    targets = listeners.clone(); // most listeners go on themselves: no copy for them
                }
                targets[i] = target;
            }
        }
        a.targets = targets;
        return a;
    }

    private static void deliver(LockListener[] targets, LockEvent event) {
        for (LockListener listener : targets) {
            if (listener == null) {
                continue; // it wanted none of this acquisition's later events
            }
            try {
                listener.onEvent(event);
            } catch (RuntimeException | LinkageError e) {
                // A listener's bug must not break the lock: the event is dropped for it alone.
                log.warn("lock listener {} failed on {}", listener, event, e);
            }
        }
    }

    /** The events of one acquisition, from its wait to its release. */
    static final class Acquisition {
        private static final int WAITING = 0;
        private static final int ENDED = 1;
        private final EngineEvents events;
        private final Waiter waiter;
        private final long id = NEXT_ACQUISITION.incrementAndGet();
        private final long startNanos;
        /** The listeners of the events after WAITING, each the one its listener's {@code onWaiting} returned. */
        private LockListener[] targets;
        private static final AtomicIntegerFieldUpdater<Acquisition> OUTCOME =
                AtomicIntegerFieldUpdater.newUpdater(Acquisition.class, "outcome");
        /** WAITING until the wait's outcome is claimed (ACQUIRED or a failure): each fires once. */
        private volatile int outcome = WAITING; // an updater, not an AtomicInteger: one object less per acquisition
        /** Set once acquired: when, and how long the wait took. */
        private volatile long acquiredNanos;
        private volatile long waitedNanos;
        // Guarded by this: the events of a hold are delivered one at a time, ACQUIRED first.
        private boolean acquiredFired;
        private boolean lostOrReleased;
        private boolean released;
        private LockLostException pendingLost;
        private long pendingLostHeld;
        private long pendingReleaseHeld = -1;

        private Acquisition(EngineEvents events, Waiter waiter, long startNanos) {
            this.events = events;
            this.waiter = waiter;
            this.startNanos = startNanos;
        }

        /**
         * The engine is about to hand this acquisition its handle: claims the outcome.
         *
         * @return false when the wait already ended otherwise (the handle will be released at
         *     once without events of its own)
         */
        boolean claimAcquired() {
            if (!OUTCOME.compareAndSet(this, WAITING, ENDED)) {
                return false;
            }
            long now = System.nanoTime();
            waitedNanos = now - startNanos;
            acquiredNanos = now;
            return true;
        }

        /**
         * Fires {@code ACQUIRED}, after {@link #claimAcquired()} said so, before the waiter is
         * handed the handle; then a {@code LOST} or {@code RELEASED} that came meanwhile (a
         * maximum hold can pass, or the provider close, while a slow listener hears of the grant).
         */
        synchronized void fireAcquired() {
            fire(LockEvent.Kind.ACQUIRED, waitedNanos, 0, null);
            acquiredFired = true;
            if (pendingLost != null) {
                fire(LockEvent.Kind.LOST, waitedNanos, pendingLostHeld, pendingLost);
            }
            if (pendingReleaseHeld >= 0) {
                fire(LockEvent.Kind.RELEASED, waitedNanos, pendingReleaseHeld, null);
            }
        }

        /**
         * Reports the wait's failure if it already failed, else when it does. Called once the
         * call that started the wait has done what it does at once: most acquisitions are
         * granted (or refused) in that call, and then need no callback on their future.
         */
        void watchOutcome() {
            CompletableFuture<LockHandle> future = waiter.future;
            if (future.isDone() && !future.isCompletedExceptionally()) {
                return; // granted: claimAcquired() fired ACQUIRED
            }
            future.whenComplete((h, e) -> {
                if (e != null) {
                    ended(e);
                }
            });
        }

        /** The waiter's future completed exceptionally. */
        void ended(Throwable e) {
            if (!OUTCOME.compareAndSet(this, WAITING, ENDED)) {
                return;
            }
            Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
            LockEvent.Kind kind;
            if (cause instanceof LockTimeoutException) {
                kind = waiter.timeout.isZero() || waiter.timeout.isNegative()
                        ? LockEvent.Kind.REFUSED : LockEvent.Kind.TIMED_OUT;
            } else {
                kind = LockEvent.Kind.FAILED;
            }
            fire(kind, System.nanoTime() - startNanos, 0, kind == LockEvent.Kind.REFUSED ? null : cause);
        }

        /** The handle was found lost. */
        synchronized void lost(LockLostException reason) {
            if (lostOrReleased) {
                return;
            }
            lostOrReleased = true;
            long held = System.nanoTime() - acquiredNanos;
            if (!acquiredFired) {
                pendingLost = reason;
                pendingLostHeld = held;
                return;
            }
            fire(LockEvent.Kind.LOST, waitedNanos, held, reason);
        }

        /** The handle was closed and released. */
        synchronized void released() {
            if (released) {
                return;
            }
            released = true;
            lostOrReleased = true;
            long held = System.nanoTime() - acquiredNanos;
            if (!acquiredFired) {
                pendingReleaseHeld = held;
                return;
            }
            fire(LockEvent.Kind.RELEASED, waitedNanos, held, null);
        }

        private void fire(LockEvent.Kind kind, long waited, long held, Throwable error) {
            deliver(targets, event(kind, waited, held, error));
        }

        private LockEvent event(LockEvent.Kind kind, long waited, long held, Throwable error) {
            EngineLock lock = waiter.lock;
            return new LockEvent(kind, id, lock.name, events.scheme, lock.mode, waited, held, error);
        }

        @Override
        public String toString() {
            return "acquisition #" + id + " of '" + SafeNames.printable(waiter.lock.name) + "'";
        }
    }
}
