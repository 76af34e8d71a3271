package dev.kanuki.engine;

import dev.kanuki.LockHandle;
import dev.kanuki.LockTimeoutException;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.ChangeSubscription;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockRequest;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One acquisition in progress: its request, its deadline and the future its caller waits on.
 * The future is the single source of truth: whoever completes it first (a grant, a timeout, a
 * cancellation) wins, and a grant that arrives too late is released.
 *
 * <p>While it contends and the lock is busy, a waiter pauses between attempts. An asynchronous
 * waiter pauses without a thread: it is <em>parked</em> until a timer or a change notification
 * from the backend {@linkplain #wake() wakes} it, and its next attempt is then scheduled. A
 * synchronous waiter pauses in its own thread, which a wake-up also ends early.
 */
final class Waiter {
    private static final Logger log = LoggerFactory.getLogger(Waiter.class);

    final EngineLock lock;
    final LockRequest request;
    final Duration timeout;
    final long deadline;
    final CompletableFuture<LockHandle> future = new CompletableFuture<>();
    /** Whether a timeout should name the holder (costs a backend call); not for try-lock. */
    private final boolean nameHolder;
    /** Its events, when the provider had listeners as it started; else null. */
    EngineEvents.Acquisition events;
    /** Set when the waiter found the gate idle and contends at once. */
    boolean contendNow;
    /** The gate it queues in; set when it enters one. */
    Gate gate;
    private Backoff backoff;
    /** The thread blocked in the backend for this waiter, so a cancel can interrupt it. */
    private Thread blockedThread;
    /** Set when the engine interrupted {@link #blockedThread}: that interrupt is not the caller's. */
    private boolean interruptedByEngine;

    /**
     * Guards {@link #blockedThread}, {@link #interruptedByEngine} and the pausing state below. A
     * lock, not this waiter's monitor: a synchronous waiter pauses in {@link #pauseInline}, and a
     * virtual thread waiting inside {@code synchronized} pins its carrier thread on JDK 21 to 23.
     */
    private final ReentrantLock state = new ReentrantLock();
    /** Signalled by {@link #wake()}, which ends a pause in {@link #pauseInline}. */
    private final Condition wakeUp = state.newCondition();
    // Pausing state, guarded by state.
    private boolean subscribed;
    private ChangeSubscription subscription;
    private boolean countedAsPausing;
    /** An asynchronous waiter waiting for {@link #wake()}. */
    private boolean parked;
    /** A wake-up that arrived while the waiter was not parked: its next pause is skipped. */
    private boolean woken;
    private ScheduledFuture<?> retry;
    private boolean inLineForSlot;
    /** The backend's hint from the last failed attempt ({@link LockRequest#retryAfter}), or 0. */
    private volatile long retryAfterNanos;

    Waiter(EngineLock lock, LockRequest request, Duration timeout, long now, boolean nameHolder) {
        this.lock = lock;
        this.nameHolder = nameHolder;
        this.request = request;
        this.timeout = timeout;
        this.deadline = deadline(now, timeout);
        future.whenComplete((h, e) -> {
            if (e != null) {
                // Ended from outside (timeout, cancel, interrupt, provider closed): a wait blocked in
                // the backend or paused for it ends now, and the next waiter gets its turn.
                interruptBlockedThread();
                wake();
            }
        });
    }

    /** {@return {@code now + timeout} on the nanoTime clock, saturated far in the future} */
    static long deadline(long now, Duration timeout) {
        long nanos = saturatedNanos(timeout);
        return nanos >= Long.MAX_VALUE / 4 ? now + Long.MAX_VALUE / 4 : now + nanos;
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

    /** Ends the wait with a timeout, naming the holder when the backend can tell. */
    boolean expire() {
        if (future.isDone()) {
            return false;
        }
        OwnerInfo holder = nameHolder ? lock.provider.holderOf(request.name()) : null;
        return future.completeExceptionally(new LockTimeoutException(request.name(), timeout, holder));
    }

    /**
     * Records the thread about to block in the backend for this waiter, or (null) that it no
     * longer does.
     *
     * @return false when the waiter is already done: the thread must not block
     */
    boolean blockedIn(Thread thread) {
        state.lock();
        try {
            if (thread != null && future.isDone()) {
                return false;
            }
            blockedThread = thread;
            return true;
        } finally {
            state.unlock();
        }
    }

    /**
     * Ends a blocked wait: forgets the blocked thread, and clears an interrupt the engine sent it
     * (a synchronous caller's own thread must not keep an interrupt it did not get from its
     * application).
     *
     * @return true when the engine had interrupted the thread
     */
    boolean unblocked() {
        state.lock();
        try {
            blockedThread = null;
            boolean ours = interruptedByEngine;
            interruptedByEngine = false;
            if (ours) {
                Thread.interrupted();
            }
            return ours;
        } finally {
            state.unlock();
        }
    }

    /** {@return true when the engine interrupted the thread blocked for this waiter} */
    boolean interruptedByEngine() {
        state.lock();
        try {
            return interruptedByEngine;
        } finally {
            state.unlock();
        }
    }

    /** Interrupts the thread blocked in the backend for this waiter, if any. */
    void interruptBlockedThread() {
        state.lock();
        try {
            if (blockedThread != null && !interruptedByEngine) {
                interruptedByEngine = true;
                blockedThread.interrupt();
            }
        } finally {
            state.unlock();
        }
    }

    // ---------------------------------------------------------------- pausing

    /**
     * Asks the backend for change notifications, once per waiter.
     *
     * @return true when this call subscribed: the caller must make one more attempt before
     *     pausing, so that a change just before the subscription is not missed
     */
    boolean subscribeOnce(LockBackend backend) {
        state.lock();
        try {
            if (subscribed) {
                return false;
            }
            subscribed = true;
        } finally {
            state.unlock();
        }
        ChangeSubscription s;
        try {
            s = backend.watchChanges(request, this::wake);
        } catch (RuntimeException e) {
            log.debug("change notifications unavailable for '{}'; polling", request.name(), e);
            s = null;
        }
        state.lock();
        try {
            if (subscription == null && s != null && !future.isDone()) {
                subscription = s;
                return true;
            }
        } finally {
            state.unlock();
        }
        if (s != null) {
            s.cancel(); // finished while subscribing
        }
        return false;
    }

    private boolean watching() {
        state.lock();
        try {
            return subscription != null;
        } finally {
            state.unlock();
        }
    }

    /** Keeps the backend's retry-after hint of the attempt that just failed (or forgets the last one). */
    void afterFailedAttempt() {
        retryAfterNanos = request.takeRetryAfter().map(Waiter::saturatedNanos).orElse(0L);
    }

    /**
     * @param slots the provider's counters, which scale pauses with the number of pausing waiters
     * @return how long to pause before the next attempt
     */
    long nextPauseNanos(WaitSlots slots) {
        state.lock();
        try {
            if (!countedAsPausing) {
                countedAsPausing = true;
                slots.startPausing();
            }
        } finally {
            state.unlock();
        }
        if (backoff == null) {
            backoff = new Backoff();
        }
        // A waiter that gets change notifications only needs its timer for what sends none:
        // a dead holder's lease running out.
        long own = watching() ? Math.max(lock.provider.pollNanos, WATCHED_POLL_NANOS) : lock.provider.pollNanos;
        long crowd = slots.crowdPauseNanos();
        long hint = retryAfterNanos;
        if (hint > 0 && watching()) {
            // The backend says the lock stays busy that long unless a change is notified, which
            // ends the pause early: one attempt when the holder's lease runs out, not a ramp of them.
            // A little later than the hint (up to 1/16 more) so that waiters do not retry in step.
            long pause = Math.max(hint, crowd) + TimeUnit.MILLISECONDS.toNanos(1);
            return Math.max(0, Math.min(pause + ThreadLocalRandom.current().nextLong(pause / 16 + 1),
                    remainingNanos()));
        }
        if (crowd > own) {
            // So many waiters pause that their number sets the pace: no quick first attempts.
            return Backoff.jittered(crowd, remainingNanos());
        }
        return backoff.nextPauseNanos(remainingNanos(), own);
    }

    boolean joinLineForSlot() {
        state.lock();
        try {
            if (inLineForSlot || future.isDone()) {
                return false;
            }
            inLineForSlot = true;
            return true;
        } finally {
            state.unlock();
        }
    }

    /** {@return true when the waiter still waits and so should be woken for the slot} */
    boolean leaveLineForSlot() {
        state.lock();
        try {
            inLineForSlot = false;
            return !future.isDone();
        } finally {
            state.unlock();
        }
    }

    /** The pause between attempts of a waiter that also gets change notifications. */
    static final long WATCHED_POLL_NANOS = TimeUnit.SECONDS.toNanos(1);

    /**
     * Pauses the calling (synchronous) waiter's thread until the pause ends, a change arrives or
     * the waiter is done.
     */
    void pauseInline(long nanos) throws InterruptedException {
        state.lock();
        try {
            long until = System.nanoTime() + nanos;
            while (!woken && !future.isDone()) {
                long left = until - System.nanoTime();
                if (left <= 0) {
                    break;
                }
                wakeUp.awaitNanos(left);
            }
            woken = false;
        } finally {
            state.unlock();
        }
    }

    /**
     * Parks an asynchronous waiter: no thread waits for it; {@link #wake()} (from the timer
     * after {@code nanos}, a change notification, or its future completing) resumes it.
     *
     * @return false when a wake-up already arrived: the caller attempts again at once
     */
    boolean park(long nanos) {
        state.lock();
        try {
            if (woken || future.isDone()) {
                woken = false;
                return false;
            }
            parked = true;
            retry = EngineExecutors.timer().schedule(this::wake, nanos, TimeUnit.NANOSECONDS);
            return true;
        } finally {
            state.unlock();
        }
    }

    /**
     * Ends a pause early or resumes a parked waiter. Called by the timer, by the backend's change
     * notification and when the future completes; quick, never calls the backend.
     */
    void wake() {
        ScheduledFuture<?> timer;
        state.lock();
        try {
            if (!parked) {
                woken = true;
                wakeUp.signalAll();
                return;
            }
            parked = false;
            timer = retry;
            retry = null;
        } finally {
            state.unlock();
        }
        if (timer != null) {
            timer.cancel(false);
        }
        EngineExecutors.workers().execute(() -> gate.contendOnWorker(this));
    }

    /** Stops notifications and timers once the waiter has its answer. */
    void stopWaiting(WaitSlots slots) {
        ChangeSubscription s;
        ScheduledFuture<?> timer;
        boolean counted;
        state.lock();
        try {
            s = subscription;
            subscription = null;
            subscribed = true; // no subscription after the end
            timer = retry;
            retry = null;
            parked = false;
            counted = countedAsPausing;
            countedAsPausing = false;
        } finally {
            state.unlock();
        }
        if (counted) {
            slots.stopPausing();
        }
        if (timer != null) {
            timer.cancel(false);
        }
        if (s != null) {
            try {
                s.cancel();
            } catch (RuntimeException e) {
                log.debug("cancelling change notifications for '{}' failed", request.name(), e);
            }
        }
    }
}
