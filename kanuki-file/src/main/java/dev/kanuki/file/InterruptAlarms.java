package dev.kanuki.file;

import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Interrupts a thread blocked in {@code FileChannel.lock()} when its wait runs out: the only way
 * to bound that call. The one alarm thread sleeps until the earliest deadline and is only woken
 * when an earlier one arrives. A scheduled executor would instead wake its thread at every arm
 * and cancel, which on a small machine costs more than the lock handoff being timed.
 *
 * <p>Each thread has one alarm, reused for all its waits (a thread waits for one lock at a
 * time). The sorted set holds at most one entry per alarm, sorted by a time at or before the
 * alarm's deadline. Arming again with a later deadline (the usual case: every wait is "now plus
 * the same timeout") only sets the deadline, and cancelling only changes the state: neither
 * touches the set. When the alarm thread reaches an entry it fires the alarm if it is armed and
 * due, moves the entry to the deadline if it is armed but not yet due, and drops it otherwise.
 * So a thread handing a lock back and forth pays two uncontended lock entries per wait, not
 * an allocation, a sorted insert and a sorted removal.
 */
final class InterruptAlarms {
    static final InterruptAlarms SHARED = new InterruptAlarms();

    private final ConcurrentSkipListSet<Entry> pending = new ConcurrentSkipListSet<>();
    private final AtomicLong sequence = new AtomicLong();
    private final ThreadLocal<Alarm> alarms = ThreadLocal.withInitial(() -> new Alarm(this, Thread.currentThread()));
    private final Thread worker;
    /** When the alarm thread will wake (relative to {@link #base}), or {@code Long.MIN_VALUE} while awake. */
    private volatile long sleepingUntil = Long.MAX_VALUE;
    /** A fixed origin: every time here is {@code System.nanoTime() - base}, so comparisons survive wrap-around. */
    private final long base = System.nanoTime();

    private InterruptAlarms() {
        worker = new Thread(this::run, "kanuki-file-alarm");
        worker.setDaemon(true);
        worker.start();
    }

    /** A place of an alarm in the sorted set. */
    private record Entry(long at, long order, Alarm alarm) implements Comparable<Entry> {
        @Override
        public int compareTo(Entry other) {
            int byTime = Long.compare(at, other.at);
            return byTime != 0 ? byTime : Long.compare(order, other.order);
        }
    }

    /** The alarm of one thread, armed for one wait at a time. */
    static final class Alarm {
        private static final int IDLE = 0;
        private static final int ARMED = 1;
        private static final int FIRED = 2;
        private final InterruptAlarms owner;
        private final Thread thread;
        /**
         * Guards the fields below. A lock, not the alarm's monitor: firing interrupts a thread
         * blocked in {@code FileChannel.lock()}, which closes the channel and waits for that
         * thread to leave the call, and the alarm's own thread (perhaps virtual) may be waiting
         * to cancel meanwhile.
         */
        private final ReentrantLock lock = new ReentrantLock();
        private int state = IDLE;
        /** The deadline of the current wait, when armed. */
        private long due;
        /** This alarm's entry in the sorted set, or null; its time is at or before {@link #due} while armed. */
        private Entry queued;

        private Alarm(InterruptAlarms owner, Thread thread) {
            this.owner = owner;
            this.thread = thread;
        }

        /** {@return true when the alarm had already fired (the thread has been interrupted)} */
        boolean cancel() {
            lock.lock();
            try {
                boolean fired = state == FIRED;
                state = IDLE; // the entry, if any, is dropped when the alarm thread reaches it
                return fired;
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Arms the calling thread's alarm.
     *
     * @param thread the thread to interrupt: the calling thread (its alarm is reused)
     * @param afterNanos when, from now (less than {@code Long.MAX_VALUE / 4})
     * @return the alarm, to cancel once the wait is over
     */
    Alarm arm(Thread thread, long afterNanos) {
        Alarm alarm = thread == Thread.currentThread() ? alarms.get() : new Alarm(this, thread);
        long due = System.nanoTime() - base + afterNanos;
        boolean inserted = false;
        alarm.lock.lock();
        try {
            alarm.state = Alarm.ARMED;
            alarm.due = due;
            if (alarm.queued == null || alarm.queued.at() > due) {
                if (alarm.queued != null) {
                    pending.remove(alarm.queued); // an earlier deadline than the one queued (a shorter timeout)
                }
                alarm.queued = new Entry(due, sequence.incrementAndGet(), alarm);
                pending.add(alarm.queued);
                inserted = true;
            }
        } finally {
            alarm.lock.unlock();
        }
        if (inserted && due < sleepingUntil) {
            LockSupport.unpark(worker);
        }
        return alarm;
    }

    private void run() {
        while (true) {
            Entry first = firstOrNull();
            long now = System.nanoTime() - base;
            if (first != null && first.at() - now <= 0) {
                pending.remove(first);
                reached(first, now);
                continue;
            }
            long target = first == null ? Long.MAX_VALUE : first.at();
            sleepingUntil = target;
            if (firstOrNull() != first) {
                continue; // an earlier alarm arrived while we looked
            }
            if (first == null) {
                LockSupport.park(this);
            } else {
                LockSupport.parkNanos(this, first.at() - now);
            }
            sleepingUntil = Long.MIN_VALUE; // awake: arms need not wake us
        }
    }

    /** An entry's time has come: fire its alarm, move the entry to the alarm's later deadline, or drop it. */
    private void reached(Entry entry, long now) {
        Alarm alarm = entry.alarm();
        alarm.lock.lock();
        try {
            if (alarm.queued != entry) {
                return; // replaced by an earlier entry meanwhile
            }
            alarm.queued = null;
            if (alarm.state != Alarm.ARMED) {
                return; // the wait ended: nothing to do until the thread arms again
            }
            if (alarm.due - now <= 0) {
                alarm.state = Alarm.FIRED;
                // Under the lock, so that a cancel that reports the alarm fired comes after the interrupt.
                alarm.thread.interrupt();
            } else {
                alarm.queued = new Entry(alarm.due, sequence.incrementAndGet(), alarm);
                pending.add(alarm.queued);
            }
        } finally {
            alarm.lock.unlock();
        }
    }

    private Entry firstOrNull() {
        try {
            return pending.first();
        } catch (java.util.NoSuchElementException e) {
            return null;
        }
    }
}
