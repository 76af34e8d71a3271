package dev.kanuki.faults;

import dev.kanuki.LeaseKind;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The faults, each run against one target with fresh worker processes and a fresh fenced
 * resource. A worker's fenced write is the referee: the resource refuses any token below one it
 * has accepted, so a holder that lost its lock cannot corrupt it, and a write it accepts in the
 * wrong order is a violation.
 */
final class Scenarios {
    private static final Duration START = Duration.ofSeconds(60);
    private static final Duration ANSWER = Duration.ofSeconds(20);

    private Scenarios() {
    }

    /** SIGKILL of the holder while another process waits: how soon does the waiter hold it? */
    static Outcome killedHolder(Target target, String uri, String name, Path dir) throws Exception {
        Path fence = dir.resolve("fence.db");
        try (Worker holder = Worker.start(uri, name, fence, dir.resolve("holder.err"))) {
            long first = holder.awaitHeld(START);
            if (first < 0) {
                return Outcome.unexpected(-1, "the first holder never held the lock");
            }
            try (Worker waiter = Worker.start(uri, name, fence, dir.resolve("waiter.err"))) {
                if (waiter.awaitHeld(Duration.ofSeconds(2)) >= 0) {
                    return Outcome.unexpected(-1, "a second process held the lock while the first lived");
                }
                long killed = System.nanoTime();
                holder.kill();
                Duration bound = target.recoveryBound();
                long second = waiter.awaitHeld(bound.plusSeconds(10));
                long ms = (System.nanoTime() - killed) / 1_000_000;
                if (second < 0) {
                    return Outcome.unexpected(-1, "not free " + bound.plusSeconds(10).toSeconds() + " s after the kill");
                }
                if (second <= first) {
                    return Outcome.unexpected(ms, "fencing token went back: " + first + " then " + second);
                }
                if (!"WROTE".equals(waiter.write("second", ANSWER))) {
                    return Outcome.unexpected(ms, "the new holder's fenced write was refused");
                }
                if (ms > bound.toMillis()) {
                    return Outcome.unexpected(ms, "recovered after " + ms + " ms, documented bound " + bound.toMillis() + " ms");
                }
                return Outcome.held(ms, "free " + ms + " ms after SIGKILL (bound " + bound.toMillis() + " ms)");
            }
        }
    }

    /**
     * SIGSTOP of the holder for longer than its lease, another process waiting; then SIGCONT and
     * the paused holder tries its fenced write. ttl backends: the waiter takes over and the
     * resumed holder is told and refused. Session backends: the paused holder keeps its lock.
     */
    static Outcome pausedHolder(Target target, String uri, String name, Path dir) throws Exception {
        Path fence = dir.resolve("fence.db");
        try (Worker holder = Worker.start(uri, name, fence, dir.resolve("holder.err"))) {
            long first = holder.awaitHeld(START);
            if (first < 0) {
                return Outcome.unexpected(-1, "the first holder never held the lock");
            }
            try (Worker waiter = Worker.start(uri, name, fence, dir.resolve("waiter.err"))) {
                if (waiter.awaitHeld(Duration.ofSeconds(2)) >= 0) {
                    return Outcome.unexpected(-1, "a second process held the lock while the first lived");
                }
                long paused = System.nanoTime();
                holder.signal("STOP");
                Duration window = Target.LEASE.plusSeconds(3);
                long second = waiter.awaitHeld(window);
                long ms = second < 0 ? -1 : (System.nanoTime() - paused) / 1_000_000;
                if (target.kind() == LeaseKind.TTL) {
                    if (second < 0) {
                        holder.signal("CONT");
                        return Outcome.unexpected(-1, "the lease of a paused holder did not run out within "
                                + window.toMillis() + " ms");
                    }
                    if (second <= first || !"WROTE".equals(waiter.write("newer", ANSWER))) {
                        holder.signal("CONT");
                        return Outcome.unexpected(ms, "the new holder's token " + second + " (old " + first
                                + ") or its write was refused");
                    }
                    holder.signal("CONT");
                    String late = holder.write("late", ANSWER);
                    if (!"REFUSED".equals(late)) {
                        return Outcome.unexpected(ms, "the resumed holder's write was " + late + " after a newer holder wrote");
                    }
                    if (!holder.saw(Target.LEASE.plusSeconds(10), "LOST")) {
                        return Outcome.unexpected(ms, "the resumed holder was never told it lost the lock");
                    }
                    return Outcome.held(ms, "taken over " + ms + " ms into the pause; resumed holder told, its write refused");
                }
                if (second >= 0) {
                    holder.signal("CONT");
                    return Outcome.unexpected(ms, "a session lock was taken from a paused but live holder");
                }
                holder.signal("CONT");
                if (!"WROTE".equals(holder.write("kept", ANSWER))) {
                    return Outcome.unexpected(-1, "the paused session holder's write was refused though it kept the lock");
                }
                return Outcome.held(-1, "the paused holder kept its lock (session), its write accepted");
            }
        }
    }
}
