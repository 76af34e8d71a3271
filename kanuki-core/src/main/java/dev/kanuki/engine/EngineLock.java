package dev.kanuki.engine;

import dev.kanuki.DistributedSemaphore;
import dev.kanuki.LockException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockTimeoutException;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.SafeNames;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.Lock;

/**
 * A named lock (exclusive, shared, or a semaphore permit) as the engine runs it: the caller's
 * side of the {@link Gate}.
 */
final class EngineLock implements DistributedSemaphore {
    final EngineLockProvider provider;
    final String name;
    final LockMode mode;
    private final int permits;
    private final String gateKey;
    /** The maximum hold of each acquisition in nanoseconds; 0 for none. */
    final long maxHoldNanos;
    /** Whether a passed maximum hold interrupts the thread that acquired. */
    final boolean interruptHolder;

    EngineLock(EngineLockProvider provider, String name, LockMode mode, int permits) {
        this(provider, name, mode, permits, 0, false);
    }

    private EngineLock(EngineLockProvider provider, String name, LockMode mode, int permits, long maxHoldNanos,
                       boolean interruptHolder) {
        this.provider = provider;
        this.name = name;
        this.mode = mode;
        this.permits = permits;
        String namespace = mode == LockMode.PERMIT ? "\u0000S\u0000" : "\u0000L\u0000";
        this.gateKey = provider.scope + namespace + name;
        this.maxHoldNanos = maxHoldNanos;
        this.interruptHolder = interruptHolder;
    }

    @Override
    public DistributedSemaphore withMaxHold(Duration maxHold, boolean interruptHolder) {
        if (maxHold.isZero() || maxHold.isNegative()) {
            throw new IllegalArgumentException("the maximum hold must be more than zero, got " + maxHold);
        }
        long nanos = maxHold.compareTo(Duration.ofDays(365 * 100)) > 0 ? Long.MAX_VALUE / 4 : maxHold.toNanos();
        return new EngineLock(provider, name, mode, permits, nanos, interruptHolder);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public int permits() {
        return permits;
    }

    @Override
    public Optional<LockHandle> tryAcquire() {
        return tryAcquire(Duration.ZERO);
    }

    @Override
    public Optional<LockHandle> tryAcquire(Duration timeout) {
        Waiter w = start(timeout, false);
        LockHandle handle = awaitHandle(w, true);
        return Optional.ofNullable(heldByThisThread(handle));
    }

    @Override
    public LockHandle acquire(Duration timeout) {
        return heldByThisThread(awaitHandle(start(timeout, true), false));
    }

    /** Names the calling thread as the holder a passed maximum hold interrupts, when asked to. */
    private LockHandle heldByThisThread(LockHandle handle) {
        if (interruptHolder && handle instanceof EngineHandle engineHandle) {
            engineHandle.heldBy(Thread.currentThread());
        }
        return handle;
    }

    @Override
    public CompletableFuture<LockHandle> acquireAsync(Duration timeout) {
        provider.checkOpen();
        long now = System.nanoTime();
        Waiter w = new Waiter(this, newRequest(now, timeout), timeout, now, true);
        EngineEvents events = provider.events;
        if (events != null) {
            w.events = events.waiting(w, now);
        }
        try {
            return enterAsync(w);
        } finally {
            if (w.events != null) {
                w.events.watchOutcome();
            }
        }
    }

    /** Queues a waiter and, when it may contend at once, contends on a worker thread. */
    private CompletableFuture<LockHandle> enterAsync(Waiter w) {
        provider.register(w);
        if (w.isDone()) {
            return w.future; // the provider closed meanwhile
        }
        Gate gate = enter(w);
        if (gate == null) {
            return w.future;
        }
        if (w.contendNow) {
            gate.contendOnWorker(w);
        }
        if (!w.isDone() && w.remainingNanos() < Long.MAX_VALUE / 8) {
            ScheduledFuture<?> expiry = EngineExecutors.timer().schedule(
                    () -> EngineExecutors.workers().execute(w::expire), w.remainingNanos(), TimeUnit.NANOSECONDS);
            w.future.whenComplete((h, e) -> expiry.cancel(false));
        }
        return w.future;
    }

    @Override
    public Lock asJavaLock() {
        return new JavaLockView(this);
    }

    /** A request that carries the caller's deadline, so that a backend can bound each call by it. */
    private LockRequest newRequest(long now, Duration timeout) {
        return new LockRequest(name, mode, permits, provider.lease, Waiter.deadline(now, timeout));
    }

    /** Starts a waiter (and its events) and enters it ({@link #enterInline}). */
    private Waiter start(Duration timeout, boolean nameHolder) {
        provider.checkOpen();
        long now = System.nanoTime();
        Waiter w = new Waiter(this, newRequest(now, timeout), timeout, now, nameHolder);
        EngineEvents events = provider.events;
        if (events != null) {
            w.events = events.waiting(w, now);
        }
        try {
            return enterInline(w);
        } finally {
            if (w.events != null) {
                w.events.watchOutcome();
            }
        }
    }

    /** Queues a waiter and, when it may contend at once, contends in this thread. */
    private Waiter enterInline(Waiter w) {
        provider.register(w);
        if (w.isDone()) {
            return w; // the provider closed meanwhile: awaitHandle reports it
        }
        Gate gate = enter(w);
        if (gate != null && w.contendNow) {
            gate.contendInline(w);
        }
        return w;
    }

    /** {@return the gate the waiter entered, or null when it was served at once} */
    private Gate enter(Waiter w) {
        while (true) {
            Gate gate = GateTable.JVM.gate(gateKey);
            w.gate = gate;
            switch (gate.enter(w)) {
                case RETIRED:
                    continue;
                case CONTEND_NOW:
                    w.contendNow = true;
                    return gate;
                case SERVED:
                    return null;
                default:
                    return gate;
            }
        }
    }

    /**
     * Waits for the waiter's answer in the calling thread.
     *
     * @param timeoutIsEmpty true to return null on timeout instead of throwing
     */
    private LockHandle awaitHandle(Waiter w, boolean timeoutIsEmpty) {
        try {
            while (true) {
                try {
                    if (w.future.isDone()) {
                        return w.future.get();
                    }
                    long remaining = w.remainingNanos();
                    if (remaining <= 0) {
                        w.expire();
                        return w.future.get();
                    }
                    return w.future.get(remaining, TimeUnit.NANOSECONDS);
                } catch (TimeoutException e) {
                    w.expire();
                }
            }
        } catch (InterruptedException e) {
            if (w.future.completeExceptionally(interrupted(e))) {
                Thread.currentThread().interrupt();
                throw interrupted(e);
            }
            w.future.thenAccept(LockHandle::close);
            Thread.currentThread().interrupt();
            throw interrupted(e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof LockTimeoutException timeout) {
                if (timeoutIsEmpty) {
                    return null;
                }
                throw new LockTimeoutException(timeout.lockName(), timeout.timeout(), timeout.holder().orElse(null));
            }
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw new LockException("acquiring lock '" + SafeNames.printable(name) + "' failed: " + cause, cause);
        }
    }

    private LockException interrupted(InterruptedException e) {
        return new LockException("interrupted while waiting for lock '" + SafeNames.printable(name) + "'", e);
    }

    /** The same store, name and mode: the same lock, whichever provider or call made it. */
    @Override
    public boolean equals(Object o) {
        return o instanceof EngineLock other && other.mode == mode && other.gateKey.equals(gateKey);
    }

    @Override
    public int hashCode() {
        return gateKey.hashCode() * 31 + mode.hashCode();
    }

    @Override
    public String toString() {
        return mode + " lock '" + SafeNames.printable(name) + "' on " + provider.uri();
    }
}
