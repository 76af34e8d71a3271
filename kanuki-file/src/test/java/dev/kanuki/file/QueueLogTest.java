package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.kanuki.spi.ProcessIdentity;
import org.junit.jupiter.api.Test;

/**
 * Replaying a queue file whose lines came in the orders a compaction can leave them: the same
 * arrival line twice (its writer appended it again while the compaction forwarded the first copy
 * late). A copy must not move a contender, nor bring back one that has left.
 */
class QueueLogTest {
    private static final long T0 = 1_000_000L;
    private static final long LEASE = 3_600_000L;

    private static String arrival(String id, long at) {
        return QueueLog.arrival(new TtlRecord(id, ProcessIdentity.pid(), at, at + LEASE, ProcessIdentity.host(), "job"));
    }

    @Test
    void aLateCopyOfAnArrivalDoesNotBringBackOneThatLeft() {
        String text = arrival("p", T0) + arrival("q", T0 + 1) + QueueLog.token("p", 7) + QueueLog.removal("p")
                + arrival("p", T0); // forwarded late by a compaction
        QueueLog log = QueueLog.replay(text);
        assertNull(log.get("p"), "p released; the copy of its arrival must stay dead");
        assertEquals("q", log.holder(T0 + 2).record.id());
    }

    @Test
    void aLateCopyOfTheHoldersArrivalDoesNotSendItToTheBack() {
        String text = arrival("p", T0) + arrival("q", T0 + 1) + QueueLog.token("p", 7) + QueueLog.renewal("p", T0 + 2 * LEASE)
                + arrival("p", T0);
        QueueLog log = QueueLog.replay(text);
        assertEquals("p", log.holder(T0 + 2).record.id(), "q would see itself the holder while p holds");
        assertEquals(T0 + 2 * LEASE, log.get("p").leaseUntil, "the renewal must not be undone by the copy");
        assertEquals(7, log.get("p").token);
    }

    @Test
    void aCopyOfOneRetiredByATokenLineStaysRetired() {
        String text = arrival("dead", T0) + arrival("q", T0 + 1) + QueueLog.token("q", 8) + arrival("dead", T0);
        assertNull(QueueLog.replay(text).get("dead"));
        assertEquals("q", QueueLog.replay(text).holder(T0 + 2).record.id());
    }

    @Test
    void anArrivalAgainAfterRunningOutGoesToTheBack() {
        // A contender whose line ran out (a pause) arrives again with a later time: a new arrival.
        String text = arrival("p", T0) + arrival("q", T0 + LEASE / 2) + QueueLog.removal("p") + arrival("p", T0 + LEASE + 5);
        QueueLog log = QueueLog.replay(text);
        assertNotNull(log.get("p"));
        assertEquals(1, log.place("p", T0 + LEASE + 6));
        assertEquals("q", log.holder(T0 + LEASE + 6).record.id());
    }

    @Test
    void aRemovalAheadOfItsForwardedArrivalKeepsTheHolderGone() {
        // p arrived and took the lock in the file a compaction was replacing, and released into the
        // new file; the compaction then forwarded p's arrival and token behind the removal (seen in
        // a run: the queue stayed blocked by p until its lease ran out).
        String text = arrival("q", T0) + QueueLog.removal("p") + arrival("p", T0 + 1) + QueueLog.token("p", 9)
                + arrival("r", T0 + 2);
        QueueLog log = QueueLog.replay(text);
        assertNull(log.get("p"), "p left; its forwarded arrival must stay dead");
        assertEquals("q", log.holder(T0 + 3).record.id());
        assertEquals(1, log.place("r", T0 + 3));
    }
}
