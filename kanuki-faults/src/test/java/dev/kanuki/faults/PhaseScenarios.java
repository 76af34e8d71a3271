package dev.kanuki.faults;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * A holder frozen (SIGSTOP) at one step of its lock's life, for longer than its lease, then let go:
 * just after the backend granted it the lock (before the holder knew), just before a renewal or a
 * session check, just before its release. ttl: a waiter takes over when the lease runs out; the
 * resumed holder is told and its write refused; a late release must not free the new holder's
 * lock. Session: the frozen holder keeps the lock and the waiter gets it after the release.
 */
final class PhaseScenarios {
    private PhaseScenarios() {
    }

    static Outcome pausedAtAcquire(Trial t) throws Exception {
        return pausedAt(t, PausingBackend.Phase.ACQUIRE, FaultSuiteTest.PAUSE_ACQUIRE);
    }

    static Outcome pausedAtRenew(Trial t) throws Exception {
        return pausedAt(t, PausingBackend.Phase.RENEW, FaultSuiteTest.PAUSE_RENEW);
    }

    static Outcome pausedAtRelease(Trial t) throws Exception {
        return pausedAt(t, PausingBackend.Phase.RELEASE, FaultSuiteTest.PAUSE_RELEASE);
    }

    private static Outcome pausedAt(Trial t, PausingBackend.Phase phase, String column) throws Exception {
        Path go = t.dir().resolve("go-" + phase.name().toLowerCase(java.util.Locale.ROOT));
        Path armed = go.resolveSibling(go.getFileName() + ".armed");
        List<String> env = List.of("env", "KANUKI_FAULTS_PAUSE_AT=" + phase.name(), "KANUKI_FAULTS_GO=" + go);
        Worker holder;
        Worker waiter;
        if (phase == PausingBackend.Phase.ACQUIRE) {
            Files.createFile(armed);
            holder = t.worker(t.uri(), env);
            if (!Trial.until(Trial.START, () -> holder.paused() != null || holder.failed() != null || holder.ended())) {
                throw new Trial.Failure("the holder did not reach its acquisition within " + Trial.START.toSeconds() + " s");
            }
            if (holder.paused() == null) {
                throw new Trial.Failure("the holder could not take the free lock: " + holder.failed());
            }
        } else {
            holder = t.holder(t.uri(), env, List.of());
        }
        if (phase == PausingBackend.Phase.ACQUIRE) {
            holder.signal("STOP");
            waiter = t.worker(); // no check that nobody holds: the frozen holder's lease may run out while it starts
            Trial.until(Trial.START, waiter::acquiring);
        } else {
            waiter = t.waiters(1, t.uri()).get(0);
            Files.createFile(armed);
            if (phase == PausingBackend.Phase.RELEASE) {
                holder.releaseAsync(); // it logs the end of its critical section, then reaches the release
            }
            Duration reach = Trial.ANSWER.plus(Target.LEASE);
            if (!Trial.until(reach, () -> holder.paused() != null || holder.lost() || holder.ended())) {
                throw new Trial.Failure("the holder did not reach its " + phase + " within " + reach.toSeconds() + " s");
            }
            if (holder.paused() == null) {
                throw new Trial.Retry("the holder lost its lock or ended before reaching its " + phase);
            }
            holder.signal("STOP");
        }
        long paused = t.mark("SIGSTOP holder at its " + phase);
        Duration window = Target.LEASE.plus(Target.SLACK);
        boolean taken = Trial.until(window, waiter::holds);
        long ms = taken ? (t.enteredAt(waiter.token()) - paused) / 1_000_000 : -1;
        if (t.target().ttl() != taken) {
            resume(holder, go);
            return Outcome.unexpected(ms, taken ? "a session lock was taken from a frozen but live holder"
                    : "the lease of a holder frozen at its " + phase + " did not run out within " + window.toMillis() + " ms");
        }
        String first = taken ? waiter.inc(Trial.ANSWER) : null;
        if (taken && !"INC 1".equals(first)) {
            resume(holder, go);
            return Outcome.unexpected(ms, "the new holder's increment was " + first);
        }
        resume(holder, go);
        if (phase == PausingBackend.Phase.RELEASE) {
            return lateRelease(t, holder, waiter, taken, ms, column);
        }
        if (!Trial.until(Trial.ANSWER, () -> holder.holds() || holder.failed() != null || holder.ended())) {
            return Outcome.unexpected(ms, "the resumed holder never finished its " + phase);
        }
        if (!holder.holds()) {
            if (!taken) {
                return Outcome.unexpected(-1, "the frozen session holder failed after it resumed: " + holder.failed());
            }
            return t.judge(column, ms, "taken over " + ms + " ms into the freeze; the resumed holder was refused the lock "
                    + "before it entered (" + FileFaults.shorten(String.valueOf(holder.failed()), 80) + ")");
        }
        String late = holder.inc(Trial.ANSWER);
        if (taken) {
            if (!"REFUSED".equals(late)) {
                return Outcome.unexpected(ms, "the resumed holder's increment was " + late + " after a newer holder's");
            }
            if (!Trial.until(Target.LEASE.plus(Target.SLACK), holder::lost)) {
                return Outcome.unexpected(ms, "the resumed holder was never told it lost the lock");
            }
            return t.judge(column, ms, "taken over " + ms + " ms into the freeze; the resumed holder told, its write refused");
        }
        if (!"INC 1".equals(late)) {
            return Outcome.unexpected(-1, "the frozen session holder's increment was " + late + " though it kept the lock");
        }
        holder.release(Trial.ANSWER);
        if (!Trial.until(t.target().recoveryBound(), waiter::holds)) {
            return Outcome.unexpected(-1, "the waiter did not get the lock after the resumed holder released it");
        }
        waiter.inc(Trial.ANSWER);
        return t.judge(column, -1, "the frozen holder kept its lock (session), its write accepted; the waiter held after its release");
    }

    /** The frozen release resumes: with the lock taken over it must not free the new holder's lock. */
    private static Outcome lateRelease(Trial t, Worker holder, Worker waiter, boolean taken, long ms, String column)
            throws Exception {
        if (!Trial.until(Trial.ANSWER, holder::ended)) {
            return Outcome.unexpected(ms, "the resumed holder's release did not finish within " + Trial.ANSWER.toSeconds() + " s");
        }
        if (!taken) {
            if (!Trial.until(t.target().recoveryBound(), waiter::holds)) {
                return Outcome.unexpected(-1, "the waiter did not get the lock after the frozen holder's release went through");
            }
            waiter.inc(Trial.ANSWER);
            return t.judge(column, -1, "the frozen holder kept its lock (session) until its release went through");
        }
        // The late release ran against the new holder's lock: a third process must still find it held.
        List<Worker> third = t.waiters(1, t.uri());
        boolean lost = Trial.until(Target.LEASE, waiter::lost);
        if (lost || third.get(0).holds()) {
            return Outcome.unexpected(ms, "the frozen holder's late release freed the new holder's lock"
                    + (lost ? " (the new holder was told lost())" : " (a third process took it)"));
        }
        waiter.release(Trial.ANSWER);
        if (!Trial.until(t.target().recoveryBound(), third.get(0)::holds)) {
            return Outcome.unexpected(ms, "the third process did not get the lock after the new holder released it");
        }
        String next = third.get(0).inc(Trial.ANSWER);
        if (!"INC 2".equals(next)) {
            return Outcome.unexpected(ms, "the third holder's increment was " + next);
        }
        return t.judge(column, ms, "taken over " + ms + " ms into the freeze; the late release left the new holder's lock alone");
    }

    private static void resume(Worker holder, Path go) throws Exception {
        holder.signal("CONT");
        Files.createFile(go);
    }
}
