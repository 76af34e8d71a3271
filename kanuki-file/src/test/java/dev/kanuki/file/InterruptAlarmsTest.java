package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A thread's alarm is reused from wait to wait: a wait armed after a longer one (whose entry
 * sits later in the alarm thread's set) must still be interrupted at its own deadline, and a
 * cancelled wait never interrupts a later one.
 */
class InterruptAlarmsTest {
    private static final long SHORT = TimeUnit.MILLISECONDS.toNanos(50);

    @Test
    void aShortWaitAfterALongOneIsInterrupted() {
        InterruptAlarms.Alarm first = InterruptAlarms.SHARED.arm(Thread.currentThread(), TimeUnit.HOURS.toNanos(1));
        assertFalse(first.cancel(), "fired long before its deadline");
        InterruptAlarms.Alarm second = InterruptAlarms.SHARED.arm(Thread.currentThread(), SHORT);
        // Without the interrupt this sleeps a minute and the test fails.
        assertThrows(InterruptedException.class, () -> Thread.sleep(TimeUnit.MINUTES.toMillis(1)));
        assertTrue(second.cancel(), "the interrupt came, so the alarm must say it fired");
        assertFalse(Thread.interrupted());
    }

    @Test
    void aCancelledWaitNeverInterruptsALaterOne() throws InterruptedException {
        // Waits of a second, cancelled at once: on a loaded machine one may still fire before its
        // cancel (then it did its job); only the ones cancelled in time say anything here.
        long deadline = TimeUnit.SECONDS.toNanos(1);
        int cancelledInTime = 0;
        for (int i = 0; i < 20 && cancelledInTime < 3; i++) {
            InterruptAlarms.Alarm alarm = InterruptAlarms.SHARED.arm(Thread.currentThread(), deadline);
            if (alarm.cancel()) {
                Thread.interrupted(); // it fired first: its interrupt is this wait's, not a later one's
            } else {
                cancelledInTime++;
            }
        }
        assertTrue(cancelledInTime > 0, "no wait of a second could be cancelled before it fired");
        InterruptAlarms.Alarm longer = InterruptAlarms.SHARED.arm(Thread.currentThread(), TimeUnit.HOURS.toNanos(1));
        Thread.sleep(2 * TimeUnit.NANOSECONDS.toMillis(deadline)); // past every cancelled deadline
        assertFalse(longer.cancel(), "a cancelled wait's alarm interrupted a later wait");
        assertFalse(Thread.interrupted());
    }

    @Test
    void eachThreadHasItsOwnAlarm() throws Exception {
        InterruptAlarms.Alarm mine = InterruptAlarms.SHARED.arm(Thread.currentThread(), TimeUnit.HOURS.toNanos(1));
        boolean[] interrupted = new boolean[1];
        Thread other = new Thread(() -> {
            InterruptAlarms.Alarm theirs = InterruptAlarms.SHARED.arm(Thread.currentThread(), SHORT);
            try {
                Thread.sleep(TimeUnit.MINUTES.toMillis(1));
            } catch (InterruptedException e) {
                interrupted[0] = theirs.cancel();
            }
        });
        other.start();
        other.join(TimeUnit.MINUTES.toMillis(2));
        assertTrue(interrupted[0], "the other thread's short wait was not interrupted");
        assertFalse(mine.cancel(), "this thread's long wait was interrupted by the other's alarm");
        assertFalse(Thread.interrupted());
    }
}
