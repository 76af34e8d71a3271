package dev.kanuki.engine;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Pauses between attempts on backends that cannot wake waiters: start short so a quick handoff
 * is caught early, double up to {@code maxPause}, and add jitter so that waiters in different
 * processes do not retry in lockstep.
 */
final class Backoff {
    private static final long FIRST_PAUSE_NANOS = 200_000; // 0.2 ms

    private long current = FIRST_PAUSE_NANOS;

    /**
     * @param remainingNanos time left before the deadline
     * @param maxPauseNanos the longest step now (it may change from call to call)
     * @return the next pause, uniformly between half and one and a half of the current step (so
     *     the average pause once backed off is {@code maxPause}), never past the deadline
     */
    long nextPauseNanos(long remainingNanos, long maxPauseNanos) {
        long cap = Math.max(FIRST_PAUSE_NANOS, maxPauseNanos);
        long step = Math.min(current, cap);
        current = Math.min(cap, step * 2);
        return jittered(step, remainingNanos);
    }

    /**
     * A pause around {@code step} with the same jitter, without backing off: for waiters so many
     * that their number sets the pause (see {@code WaitSlots#crowdPauseNanos}).
     */
    static long jittered(long step, long remainingNanos) {
        long pause = step / 2 + ThreadLocalRandom.current().nextLong(step + 1);
        return Math.max(0, Math.min(pause, remainingNanos));
    }
}
