package dev.kanuki.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Guards the claim {@link HandoffBench} rests on: the ring makes two parties strictly alternate. */
class HandoffRingTest {

    /** Logs which party took which lock, in the order the locks were taken. */
    private static final class Recording implements HandoffParty {
        private final HandoffParty inner;
        private final String who;
        private final List<String> log;

        Recording(HandoffParty inner, String who, List<String> log) {
            this.inner = inner;
            this.who = who;
            this.log = log;
        }

        @Override
        public void lock(int i) throws Exception {
            inner.lock(i);
            synchronized (log) {
                log.add(who + i); // still holding lock i, so the log order is the acquisition order
            }
        }

        @Override
        public void unlock(int i) throws Exception {
            inner.unlock(i);
        }

        @Override
        public void close() throws Exception {
            inner.close();
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void ringAlternatesStrictly() throws Exception {
        ReentrantLock[] locks = {new ReentrantLock(), new ReentrantLock(), new ReentrantLock()};
        List<String> log = new ArrayList<>();
        int steps = 2000;
        Recording a = new Recording(new HandoffParty.ReentrantLockParty(locks), "A", log);
        HandoffRing ringA = new HandoffRing(a, 0);
        CountDownLatch started = new CountDownLatch(1);
        Thread partner = new Thread(() -> {
            try (Recording b = new Recording(new HandoffParty.ReentrantLockParty(locks), "B", log)) {
                HandoffRing ringB = new HandoffRing(b, 1);
                started.countDown();
                for (int i = 0; i < steps; i++) {
                    ringB.step();
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        partner.start();
        started.await(); // as HandoffPair waits for READY: the ring needs both parties on it first
        for (int i = 0; i < steps; i++) {
            ringA.step();
        }
        a.close();
        partner.join();

        List<String> snapshot;
        synchronized (log) {
            snapshot = new ArrayList<>(log);
        }
        assertEquals(2 + 2 * steps, snapshot.size());
        // After the two starting locks, every acquisition is by the party that did not take the
        // one before: each is a handoff from the other party.
        List<String> afterStart = snapshot.subList(2, snapshot.size());
        for (int i = 1; i < afterStart.size(); i++) {
            assertTrue(afterStart.get(i).charAt(0) != afterStart.get(i - 1).charAt(0),
                    "same party twice in a row at " + i + ": " + afterStart.subList(Math.max(0, i - 5), i + 1));
        }
    }
}
