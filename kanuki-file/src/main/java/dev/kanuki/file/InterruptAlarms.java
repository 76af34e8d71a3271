package dev.kanuki.file;

import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Interrupts a thread blocked in {@code FileChannel.lock()} when its wait runs out: the only way
 * to bound that call. Arming and cancelling an alarm touch a sorted set and nothing else; the
 * one alarm thread sleeps until the earliest deadline and is only woken when an earlier one
 * arrives. A scheduled executor would instead wake its thread at every arm and cancel, which on
 * a small machine costs more than the lock handoff being timed.
 */
final class InterruptAlarms {
    static final InterruptAlarms SHARED = new InterruptAlarms();

    private final ConcurrentSkipListSet<Alarm> pending = new ConcurrentSkipListSet<>();
    private final AtomicLong sequence = new AtomicLong();
    private final Thread worker;
    private volatile long sleepingUntil = Long.MAX_VALUE;

    private InterruptAlarms() {
        worker = new Thread(this::run, "kanuki-file-alarm");
        worker.setDaemon(true);
        worker.start();
    }

    /** One armed alarm. */
    static final class Alarm implements Comparable<Alarm> {
        private static final int WAITING = 0;
        private static final int DONE = 1;
        private static final int FIRED = 2;
        private final Thread thread;
        private final long deadline;
        private final long order;
        private final AtomicInteger state = new AtomicInteger(WAITING);
        private final InterruptAlarms owner;

        private Alarm(InterruptAlarms owner, Thread thread, long deadline, long order) {
            this.owner = owner;
            this.thread = thread;
            this.deadline = deadline;
            this.order = order;
        }

        @Override
        public int compareTo(Alarm other) {
            int byTime = Long.compare(deadline - owner.base, other.deadline - owner.base);
            return byTime != 0 ? byTime : Long.compare(order, other.order);
        }

        private void fire() {
            if (state.compareAndSet(WAITING, FIRED)) {
                thread.interrupt();
            }
        }

        /** @return true when the alarm had already fired (the interrupt is, or was, on its way) */
        boolean cancel() {
            if (state.compareAndSet(WAITING, DONE)) {
                owner.pending.remove(this);
                return false;
            }
            return state.get() == FIRED;
        }
    }

    /** A fixed origin so deadlines compare correctly across System.nanoTime() wrap-around. */
    private final long base = System.nanoTime();

    /**
     * @param thread the thread to interrupt
     * @param afterNanos when, from now
     * @return the alarm, to cancel once the wait is over
     */
    Alarm arm(Thread thread, long afterNanos) {
        long deadline = System.nanoTime() + afterNanos;
        Alarm alarm = new Alarm(this, thread, deadline, sequence.incrementAndGet());
        pending.add(alarm);
        if (deadline - base < sleepingUntil) {
            LockSupport.unpark(worker);
        }
        return alarm;
    }

    private void run() {
        while (true) {
            Alarm first = pending.isEmpty() ? null : firstOrNull();
            long now = System.nanoTime();
            if (first != null && first.deadline - now <= 0) {
                pending.remove(first);
                first.fire();
                continue;
            }
            long target = first == null ? Long.MAX_VALUE : first.deadline - base;
            sleepingUntil = target;
            if (firstOrNull() != first) {
                continue; // an earlier alarm arrived while we looked
            }
            if (first == null) {
                LockSupport.park(this);
            } else {
                LockSupport.parkNanos(this, first.deadline - now);
            }
            sleepingUntil = Long.MIN_VALUE; // awake: arms need not wake us
        }
    }

    private Alarm firstOrNull() {
        try {
            return pending.first();
        } catch (java.util.NoSuchElementException e) {
            return null;
        }
    }
}
