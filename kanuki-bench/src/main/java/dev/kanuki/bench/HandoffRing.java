package dev.kanuki.bench;

/**
 * Pass-the-baton over a ring of three locks, so that two parties strictly alternate without a
 * turn flag and without polling. Each party holds one lock and steps forward: take the next
 * lock (waiting), then release the one it held. Party A starts on lock 0, party B on lock 1:
 *
 * <pre>
 *   A holds 0, waits for 1          B holds 1, takes 2, releases 1 -> A gets 1 (handoff B->A)
 *   A releases 0, waits for 2       B waits for 0                  -> B gets 0 (handoff A->B)
 *   B releases 2                                                  -> A gets 2 (handoff B->A) ...
 * </pre>
 *
 * <p>After the start, every acquisition waits for a release by the other party, since a party
 * asks for its next lock right after releasing (nanoseconds) while the other needs a wake-up
 * (microseconds) before it can release that lock. So one step of a party is one round trip:
 * its release wakes the other party, whose release wakes it again. Per-handoff latency, the time
 * from one party's release to the other's acquire, is a step's time / 2. Mutual exclusion keeps
 * it deadlock-free: with three locks, two parties can never wait on each other in a cycle.
 *
 * <p>A ring is used by one thread only (a {@code ReentrantLock} must be released by its owner).
 */
final class HandoffRing {
    private final HandoffParty party;
    private final Thread owner = Thread.currentThread();
    private int held;

    /** Takes the party's starting lock; the other party must start on {@code start + 1}. */
    HandoffRing(HandoffParty party, int start) throws Exception {
        this.party = party;
        party.lock(start);
        this.held = start;
    }

    /** One step: take the next lock, release the one held. */
    void step() throws Exception {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("a handoff ring must be stepped by the thread that made it");
        }
        int next = (held + 1) % HandoffParty.LOCKS;
        party.lock(next);
        party.unlock(held);
        held = next;
    }
}
