package dev.kanuki.engine;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A provider's bound on waits that hold something while they wait: a thread parked in the
 * backend's blocking wait, and with it whatever the backend holds for that wait (a server
 * connection). Waiters that find no free slot wait by the backend's non-blocking path instead
 * (try, then a pause or a change notification), keeping their place in their name's queue.
 *
 * <p>Waiters that found no slot line up here: a slot given back wakes the first of them at once,
 * so after a release the slots pass from waiter to waiter without waiting for anyone's pause.
 *
 * <p>It also counts the waiters that are pausing between attempts, so that pauses grow with
 * their number: the attempts a provider makes per second while it waits stay bounded however
 * many names it waits for.
 */
final class WaitSlots {
    /** The default bound: blocking waits (threads, connections) per provider. */
    static final int DEFAULT = 32;
    /**
     * Pause added per pausing waiter: however many waiters pause, a provider makes about 100
     * attempts a second (an attempt costs some 100 us of CPU on a kernel lock, 250 us for a
     * server round trip through JDBC), until {@link #MAX_PAUSE_NANOS} caps the pause.
     */
    private static final long PAUSE_PER_WAITER_NANOS = 10_000_000;
    /** The longest pause between attempts, however many waiters pause. */
    private static final long MAX_PAUSE_NANOS = 100_000_000_000L;

    private final int max;
    private final AtomicInteger blocking = new AtomicInteger();
    private final AtomicInteger pausing = new AtomicInteger();
    private final ConcurrentLinkedQueue<Waiter> lineForSlot = new ConcurrentLinkedQueue<>();

    WaitSlots(int max) {
        if (max < 1) {
            throw new IllegalArgumentException("waitThreads must be at least 1, got " + max);
        }
        this.max = max;
    }

    int max() {
        return max;
    }

    /** {@return true when the caller may block in the backend; it must call {@link #give} after} */
    boolean tryTake() {
        while (true) {
            int n = blocking.get();
            if (n >= max) {
                return false;
            }
            if (blocking.compareAndSet(n, n + 1)) {
                return true;
            }
        }
    }

    /** Gives a slot back and wakes the first waiter in line for one. */
    void give() {
        blocking.decrementAndGet();
        wakeNextIfFree();
    }

    /**
     * Wakes the first waiter in line when a slot is free: called when a waiter got its lock
     * without blocking, so that after a release the line keeps moving (each served waiter
     * wakes the next) instead of waiting for pauses.
     */
    void wakeNextIfFree() {
        if (blocking.get() >= max || lineForSlot.isEmpty()) {
            return;
        }
        Waiter next;
        while ((next = lineForSlot.poll()) != null) {
            if (next.leaveLineForSlot()) {
                next.wake();
                return;
            }
        }
    }

    /** Puts a waiter that found no slot in line for the next one given back. */
    void lineUpForSlot(Waiter w) {
        if (w.joinLineForSlot()) {
            lineForSlot.add(w);
        }
    }

    int blocking() {
        return blocking.get();
    }

    void startPausing() {
        pausing.incrementAndGet();
    }

    void stopPausing() {
        pausing.decrementAndGet();
    }

    /**
     * @return the pause that keeps this provider's attempts per second bounded with as many
     *     waiters as pause now; a waiter pauses at least this long once it is longer than its own
     *     backoff would be
     */
    long crowdPauseNanos() {
        return Math.min(MAX_PAUSE_NANOS, pausing.get() * PAUSE_PER_WAITER_NANOS);
    }
}
