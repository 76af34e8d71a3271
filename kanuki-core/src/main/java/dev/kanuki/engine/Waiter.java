package dev.kanuki.engine;

import dev.kanuki.LockHandle;
import dev.kanuki.LockTimeoutException;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.LockRequest;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;

/**
 * One acquisition in progress: its request, its deadline and the future its caller waits on.
 * The future is the single source of truth: whoever completes it first (a grant, a timeout, a
 * cancellation) wins, and a grant that arrives too late is released.
 */
final class Waiter {
    final EngineLock lock;
    final LockRequest request;
    final Duration timeout;
    final long deadline;
    final CompletableFuture<LockHandle> future = new CompletableFuture<>();
    /** Whether a timeout should name the holder (costs a backend call); not for try-lock. */
    private final boolean nameHolder;
    /** Set when the waiter found the gate idle and contends at once. */
    boolean contendNow;
    private Backoff backoff;
    /** The thread blocked in the backend for this waiter, so a cancel can interrupt it. */
    private Thread blockedThread;

    Waiter(EngineLock lock, LockRequest request, Duration timeout, long now, boolean nameHolder) {
        this.lock = lock;
        this.nameHolder = nameHolder;
        this.request = request;
        this.timeout = timeout;
        long nanos = saturatedNanos(timeout);
        this.deadline = nanos >= Long.MAX_VALUE / 4 ? now + Long.MAX_VALUE / 4 : now + nanos;
    }

    static long saturatedNanos(Duration d) {
        if (d.isNegative()) {
            return 0;
        }
        try {
            return Math.min(d.toNanos(), Long.MAX_VALUE / 4);
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE / 4;
        }
    }

    long remainingNanos() {
        return deadline - System.nanoTime();
    }

    boolean isDone() {
        return future.isDone();
    }

    long nextPauseNanos() {
        if (backoff == null) {
            backoff = new Backoff(lock.provider.pollNanos);
        }
        return backoff.nextPauseNanos(remainingNanos());
    }

    /** Ends the wait with a timeout, naming the holder when the backend can tell. */
    boolean expire() {
        if (future.isDone()) {
            return false;
        }
        OwnerInfo holder = nameHolder ? lock.provider.holderOf(request.name()) : null;
        return future.completeExceptionally(new LockTimeoutException(request.name(), timeout, holder));
    }

    synchronized void blockedIn(Thread thread) {
        blockedThread = thread;
    }

    /** Interrupts the thread blocked in the backend for this waiter, if any. */
    synchronized void interruptBlockedThread() {
        if (blockedThread != null) {
            blockedThread.interrupt();
        }
    }
}
