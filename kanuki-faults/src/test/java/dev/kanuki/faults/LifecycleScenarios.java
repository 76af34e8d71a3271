package dev.kanuki.faults;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The end of a provider's life and of a wait, with a crowd of waiting threads in one process
 * ({@link CrowdWorker}): the provider closed while it holds the lock, closed while only its
 * waiters wait, and its waiters interrupted (sync) or cancelled (async). In every case no waiter
 * may be handed the lock, every wait ends promptly, and another process gets the lock within the
 * target's bound: nothing the closed provider or the ended waits left behind (a queue place, a
 * hand-over in flight, a grant nobody releases) may keep it out.
 */
final class LifecycleScenarios {
    private static final Pattern COUNTS = Pattern.compile("^\\w+ (\\d+) granted=(\\d+)(?: heldAfter=(\\d+))? pending=(\\d+) ended=(.*)$");
    private static final Duration CLOSE = Trial.ANSWER.plusSeconds(30);

    private LifecycleScenarios() {
    }

    /** The holder's provider closes while its own threads wait for the lock: the lock goes to another process. */
    static Outcome closedWhileHolding(Trial t) throws Exception {
        Worker crowd = t.crowd("hold");
        Worker other = t.waiters(1, t.uri()).get(0);
        long at = t.mark("the holder's provider closes, its own threads waiting");
        String closed = crowd.ask("close", "CLOSED", CLOSE);
        String problem = problems(closed, "close()");
        Duration bound = t.target().recoveryBound();
        if (!Trial.until(bound, other::holds)) {
            return Outcome.unexpected(-1, "another process did not get the lock within " + bound.toMillis()
                    + " ms of the holder's provider closing (" + closed + ")");
        }
        long ms = (t.enteredAt(other.token()) - at) / 1_000_000;
        if (problem != null) {
            return Outcome.unexpected(ms, problem);
        }
        String inc = other.inc(Trial.ANSWER);
        if (!"INC 1".equals(inc)) {
            return Outcome.unexpected(ms, "the next holder's increment was " + inc);
        }
        return t.judge(FaultSuiteTest.CLOSE_HOLDING, ms, "closed in " + millis(closed) + " ms, " + CrowdWorker.SYNC + "+"
                + CrowdWorker.ASYNC + " waiters ended (" + endings(closed) + "), none handed the lock; another process held "
                + ms + " ms after the close began");
    }

    /** A provider whose threads only wait closes; the holder (another process) releases; a third process gets it. */
    static Outcome closedWhileWaiting(Trial t) throws Exception {
        Worker holder = t.holder(t.uri());
        Worker crowd = t.crowd("wait");
        Thread.sleep(1000); // lets the crowd's waiters stand in line (queue places, the Redis line) before the next
        Worker other = t.waiters(1, t.uri()).get(0);
        t.mark("the waiting provider closes");
        String closed = crowd.ask("close", "CLOSED", CLOSE);
        String problem = problems(closed, "close()");
        return releaseAndNext(t, holder, other, problem, FaultSuiteTest.CLOSE_WAITING,
                "closed in " + millis(closed) + " ms, " + CrowdWorker.SYNC + "+" + CrowdWorker.ASYNC + " waiters ended ("
                        + endings(closed) + "), none handed the lock");
    }

    /** Waiters interrupted (sync) and cancelled (async) while another process holds; then it releases. */
    static Outcome interruptedWaiters(Trial t) throws Exception {
        Worker holder = t.holder(t.uri());
        Worker crowd = t.crowd("wait");
        Thread.sleep(1000); // as above: the crowd stands in line first
        Worker other = t.waiters(1, t.uri()).get(0);
        t.mark("waiters interrupted / cancelled");
        String interrupted = crowd.ask("interrupt", "INTERRUPTED", CLOSE);
        String problem = problems(interrupted, "the interrupt");
        return releaseAndNext(t, holder, other, problem, FaultSuiteTest.INTERRUPT,
                CrowdWorker.SYNC + " interrupted and " + CrowdWorker.ASYNC + " cancelled waiters ended in "
                        + millis(interrupted) + " ms (" + endings(interrupted) + "), none handed the lock");
    }

    private static Outcome releaseAndNext(Trial t, Worker holder, Worker other, String problem, String column, String detail)
            throws Exception {
        holder.inc(Trial.ANSWER);
        long released = t.mark("holder releases");
        holder.release(Trial.ANSWER);
        Duration bound = t.target().recoveryBound();
        if (!Trial.until(bound, other::holds)) {
            return Outcome.unexpected(-1, "the ended waits left the lock blocked: the next process did not get it within "
                    + bound.toMillis() + " ms of the release" + (problem == null ? "" : "; " + problem));
        }
        long ms = (t.enteredAt(other.token()) - released) / 1_000_000;
        if (problem != null) {
            return Outcome.unexpected(ms, problem);
        }
        String inc = other.inc(Trial.ANSWER);
        if (!"INC 2".equals(inc)) {
            return Outcome.unexpected(ms, "the next holder's increment was " + inc);
        }
        return t.judge(column, ms, detail + "; the next process held " + ms + " ms after the release");
    }

    /** @return what is wrong with a crowd's answer, or null */
    private static String problems(String answer, String what) {
        if (answer == null) {
            return what + " did not finish within " + CLOSE.toSeconds() + " s";
        }
        Matcher m = COUNTS.matcher(answer);
        if (!m.matches()) {
            return "unexpected answer: " + answer;
        }
        if (Integer.parseInt(m.group(2)) > 0) {
            return "a waiter was handed the lock during " + what + " (" + answer + ")";
        }
        if (m.group(3) != null && Integer.parseInt(m.group(3)) > 0) {
            return "a handle still said isHeld() after close() returned (" + answer + ")";
        }
        if (Integer.parseInt(m.group(4)) > 0) {
            return "waits still pending 20 s after " + what + " (" + answer + ")";
        }
        return null;
    }

    private static String millis(String answer) {
        Matcher m = answer == null ? null : COUNTS.matcher(answer);
        return m != null && m.matches() ? m.group(1) : "?";
    }

    private static String endings(String answer) {
        Matcher m = answer == null ? null : COUNTS.matcher(answer);
        return m != null && m.matches() ? m.group(5) : "?";
    }
}
