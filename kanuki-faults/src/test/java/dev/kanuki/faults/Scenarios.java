package dev.kanuki.faults;

import dev.kanuki.testkit.ServerProcess;
import dev.kanuki.testkit.TcpProxy;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The faults that need worker processes: each runs against one target in one {@link Trial},
 * with the referee log and the fenced counter judging the result ({@link Trial#judge}).
 */
final class Scenarios {
    private Scenarios() {
    }

    /** The fault's body: runs it and returns the cell. */
    @FunctionalInterface
    interface Body {
        Outcome run(Trial t) throws Exception;
    }

    /** SIGKILL of the holder while two others wait: the first waiter must hold within the bound, then the second. */
    static Outcome killedHolder(Trial t) throws Exception {
        Worker holder = t.holder(t.uri());
        List<Worker> waiters = t.waiters(2, t.uri());
        String first = holder.inc(Trial.ANSWER);
        if (!"INC 1".equals(first)) {
            // Seen at load 60-100: the holder's first increment unanswered in 30 s, so the kill
            // came before it and the next holder's count started at 1. Not the fault under test.
            throw new Trial.Retry("the holder's increment before the kill was answered " + first);
        }
        long killed = t.mark("SIGKILL holder");
        holder.kill();
        Duration bound = t.target().recoveryBound();
        if (!Trial.until(bound.plusSeconds(20), () -> waiters.stream().anyMatch(Worker::holds))) {
            return Outcome.unexpected(-1, "not free " + bound.plusSeconds(20).toSeconds() + " s after the kill");
        }
        Worker next = waiters.stream().filter(Worker::holds).findFirst().orElseThrow();
        Worker last = waiters.get(0) == next ? waiters.get(1) : waiters.get(0);
        long ms = (t.enteredAt(next.token()) - killed) / 1_000_000;
        if (next.token() <= holder.token()) {
            return Outcome.unexpected(ms, "fencing token went back: " + holder.token() + " then " + next.token());
        }
        String once = next.inc(Trial.ANSWER);
        String twice = next.inc(Trial.ANSWER); // the resource takes one write per token: refused
        if (!"INC 2".equals(once) || !"REFUSED".equals(twice)) {
            return Outcome.unexpected(ms, "the new holder's fenced increments: " + once + ", then " + twice);
        }
        next.release(Trial.ANSWER);
        if (!Trial.until(bound, last::holds) || !"INC 3".equals(last.inc(Trial.ANSWER))) {
            return Outcome.unexpected(ms, "the third worker did not get the lock after the second released, or its increment failed");
        }
        return withinBound(t, ms, t.judge(FaultSuiteTest.KILL, ms, "free " + ms + " ms after SIGKILL; counter 3 of 3"));
    }

    /** SIGKILL of a waiting process, then of one whose attempt is in flight: no leftover blocks the next. */
    static Outcome killedWhileAcquiring(Trial t) throws Exception {
        Worker holder = t.holder(t.uri());
        List<Worker> waiters = t.waiters(2, t.uri());
        waiters.get(0).kill(); // waiting (blocked in the server, polling, or queued)
        holder.inc(Trial.ANSWER);
        long released = t.mark("holder releases after a waiter was killed");
        holder.release(Trial.ANSWER);
        Duration bound = t.target().recoveryBound();
        Worker second = waiters.get(1);
        if (!Trial.until(bound, second::holds)) {
            return Outcome.unexpected(-1, "a killed waiter left the lock blocked: the other waiter did not get it within "
                    + bound.toMillis() + " ms of the release");
        }
        long waitMs = (t.enteredAt(second.token()) - released) / 1_000_000;
        second.inc(Trial.ANSWER);
        // Two more wait; the holder releases and at that very moment one of them is killed: its
        // attempt is in flight (the handoff may already have granted it the lock, or not).
        List<Worker> racing = t.waiters(2, t.uri());
        second.releaseAsync();
        long killed = t.mark("SIGKILL mid-acquisition, racing the release");
        racing.get(0).kill();
        Worker next = racing.get(1);
        if (!Trial.until(bound, () -> next.holds() || next.failed() != null)) {
            return Outcome.unexpected(-1, "killed mid-acquisition, the lock stayed blocked past " + bound.toMillis() + " ms");
        }
        if (!next.holds()) {
            return Outcome.unexpected(-1, "after a process was killed mid-acquisition the next one failed: " + next.failed());
        }
        long ms = (t.enteredAt(next.token()) - killed) / 1_000_000;
        next.inc(Trial.ANSWER);
        return withinBound(t, Math.max(ms, waitMs), t.judge(FaultSuiteTest.KILL_ACQUIRING, Math.max(ms, waitMs),
                "a killed waiter: the other held " + waitMs + " ms after the release; killed while its attempt raced "
                        + "the release: the next held " + ms + " ms after the kill; counter 3 of 3"));
    }

    /**
     * SIGSTOP of the holder for longer than its lease, a waiter waiting; then SIGCONT and the
     * paused holder's fenced increment. ttl: the waiter takes over, the resumed holder is told and
     * refused. Session: the paused holder keeps its lock.
     */
    static Outcome pausedHolder(Trial t) throws Exception {
        Worker holder = t.holder(t.uri());
        Worker waiter = t.waiters(1, t.uri()).get(0);
        long paused = t.mark("SIGSTOP holder");
        holder.signal("STOP");
        Duration window = Target.LEASE.plus(Target.SLACK);
        boolean taken = Trial.until(window, waiter::holds);
        long ms = taken ? (t.enteredAt(waiter.token()) - paused) / 1_000_000 : -1;
        if (t.target().ttl() != taken) {
            holder.signal("CONT");
            return Outcome.unexpected(ms, taken ? "a session lock was taken from a paused but live holder"
                    : "the lease of a paused holder did not run out within " + window.toMillis() + " ms");
        }
        if (taken && !"INC 1".equals(waiter.inc(Trial.ANSWER))) {
            holder.signal("CONT");
            return Outcome.unexpected(ms, "the new holder's increment was refused");
        }
        holder.signal("CONT");
        String late = holder.inc(Trial.ANSWER);
        if (taken && !"REFUSED".equals(late)) {
            return Outcome.unexpected(ms, "the resumed holder's increment was " + late + " after a newer holder's");
        }
        if (taken && !Trial.until(Target.LEASE.plus(Target.SLACK), holder::lost)) {
            return Outcome.unexpected(ms, "the resumed holder was never told it lost the lock");
        }
        if (!taken && !"INC 1".equals(late)) {
            return Outcome.unexpected(-1, "the paused session holder's increment was " + late + " though it kept the lock");
        }
        return t.judge(FaultSuiteTest.PAUSE, ms, taken ? "taken over " + ms + " ms into the pause; resumed holder told, its write refused"
                : "the paused holder kept its lock (session), its write accepted");
    }

    /** The breaker's lease with the suite's lease: half of it (kanuki-file's {@code BreakerLock.ttlFor}). */
    static final Duration BREAKER = Target.LEASE.dividedBy(2);

    /**
     * A process frozen (SIGSTOP) inside one step of a file lock, with whatever that step holds
     * still held: kanuki-file's test hook ({@code -Dkanuki.file.pauseAt=STEP}) stops it there and
     * writes a marker. Another process must hold within the lease plus the breaker's lease; the
     * frozen one, resumed, must not hold at the same time (acquire), must be told and refused
     * (renew: it believed it held while frozen, as in any pause past the lease), or must not
     * remove the new holder's entry (release).
     */
    static Outcome frozenInside(Trial t, String step, String fault) throws Exception {
        java.nio.file.Path marker = t.dir().resolve("paused");
        java.nio.file.Path arm = t.dir().resolve("armed");
        List<String> hook = List.of("-Dkanuki.file.pauseAt=" + step, "-Dkanuki.file.pauseMarker=" + marker,
                "-Dkanuki.file.pauseArmedBy=" + arm);
        Duration window = Target.LEASE.plus(BREAKER).plus(Target.SLACK);
        Worker frozen;
        Worker other = null;
        if (step.equals("acquire")) {
            java.nio.file.Files.createFile(arm);
            frozen = t.worker(t.uri(), List.of(), hook);
        } else {
            frozen = t.holder(t.uri(), List.of(), hook);
            other = t.waiters(1, t.uri()).get(0);
            java.nio.file.Files.createFile(arm); // renew: the next renewal pauses
            if (step.equals("release")) {
                frozen.releaseAsync(); // its critical section ends here; the release pauses inside
            }
        }
        if (!Trial.until(Trial.START, () -> java.nio.file.Files.exists(marker) || frozen.ended())) {
            return Outcome.unexpected(-1, "the worker never reached " + step);
        }
        frozen.signal("STOP");
        long at = t.mark("SIGSTOP inside " + step);
        if (other == null) {
            other = t.worker();
        }
        Worker next = other;
        boolean taken = Trial.until(window, next::holds);
        long ms = taken ? (t.enteredAt(next.token()) - at) / 1_000_000 : -1;
        if (!taken) {
            frozen.signal("CONT");
            return Outcome.unexpected(-1, "a process frozen inside " + step + " kept the lock past " + window.toMillis() + " ms");
        }
        String w = next.inc(Trial.ANSWER);
        frozen.signal("CONT");
        java.nio.file.Files.delete(marker);
        if (!Trial.until(Trial.ANSWER, () -> java.nio.file.Files.exists(marker.resolveSibling("paused.resumed")))) {
            return Outcome.unexpected(ms, "the frozen worker did not resume");
        }
        String detail;
        switch (step) {
            case "renew" -> {
                String late = frozen.inc(Trial.ANSWER);
                boolean told = Trial.until(Target.LEASE.plus(Target.SLACK), frozen::lost);
                if (!"INC 1".equals(w) || !"REFUSED".equals(late) || !told) {
                    return Outcome.unexpected(ms, "after the frozen renewal: new holder " + w + ", resumed holder " + late
                            + ", told: " + told);
                }
                detail = "taken " + ms + " ms into the freeze; resumed holder told, its write refused";
            }
            case "release" -> {
                if (!frozen.release(Trial.ANSWER)) {
                    return Outcome.unexpected(ms, "the resumed release never finished");
                }
                t.waiters(1, t.uri()); // throws when the resumed release removed the new holder's entry
                detail = "taken " + ms + " ms into the freeze; the resumed release left the new holder's lock alone ("
                        + w + ")";
            }
            default -> {
                if (Trial.until(Target.LEASE, frozen::holds)) {
                    return t.judge(fault, ms, "the resumed acquirer took the lock while it was held");
                }
                next.release(Trial.ANSWER);
                if (!Trial.until(Trial.START, frozen::holds)) {
                    return Outcome.unexpected(ms, "the resumed acquirer never got the lock once it was free");
                }
                String late = frozen.inc(Trial.ANSWER);
                detail = "taken " + ms + " ms into the freeze; the resumed acquirer waited its turn (" + w + ", " + late + ")";
            }
        }
        return t.judge(fault, ms, detail);
    }

    // ------------------------------------------------------------------ server faults

    /** Crash (SIGKILL) and restart of the server on the same port while a lock is held and another process waits. */
    static Outcome serverRestart(Trial t) throws Exception {
        return serverFault(t, FaultSuiteTest.RESTART, t.uri(), () -> {
            ServerProcess s = t.target().server();
            s.kill();
            s.restart();
        });
    }

    /** SIGSTOP of the server (its whole process tree) for longer than a lease, then SIGCONT. */
    static Outcome serverPaused(Trial t) throws Exception {
        return serverFault(t, FaultSuiteTest.SERVER_PAUSE, t.uri(), () -> {
            ServerProcess s = t.target().server();
            signalTree(s.pid(), "STOP");
            try {
                Thread.sleep(Target.LEASE.plusSeconds(1).toMillis()); // the fault's length, not a synchronisation
            } finally {
                signalTree(s.pid(), "CONT");
            }
        });
    }

    /** The holder's connections stalled by the proxy (bytes held, sockets open) past a lease, then resumed. */
    static Outcome proxyStall(Trial t) throws Exception {
        try (TcpProxy proxy = TcpProxy.to(t.target().server().host(), t.target().server().port())) {
            return serverFault(t, FaultSuiteTest.STALL, t.target().uriThrough(proxy, t.dir()), () -> {
                proxy.stall();
                try {
                    Thread.sleep(Target.LEASE.plusSeconds(2).toMillis()); // the fault's length
                } finally {
                    proxy.resume();
                }
            });
        }
    }

    /** The holder's connections reset (RST) by the proxy. */
    static Outcome proxyReset(Trial t) throws Exception {
        try (TcpProxy proxy = TcpProxy.to(t.target().server().host(), t.target().server().port())) {
            return serverFault(t, FaultSuiteTest.RESET, t.target().uriThrough(proxy, t.dir()), proxy::resetAll);
        }
    }

    /**
     * A holder releases right after the ensemble's leader is killed (SIGKILL), while the others
     * elect a new one; a waiter in another process must get the lock within the recovery bound, and
     * never while the holder still holds.
     */
    static Outcome leaderKilledDuringRelease(Trial t, java.util.concurrent.Callable<ServerProcess> leader)
            throws Exception {
        String fault = FaultSuiteTest.LEADER_RELEASE;
        Worker holder = t.holder(t.uri());
        Worker firstWaiter = t.waiters(1, t.uri()).get(0);
        ServerProcess victim = leader.call();
        long at = t.mark(fault);
        victim.kill();
        holder.releaseAndStay(); // its provider stays open: only the release can free the lock

        Duration bound = t.target().recoveryBound().plusSeconds(10); // the election, then the release's retries
        Trial.until(bound, () -> firstWaiter.holds() || firstWaiter.failed() != null);
        Worker waiter = firstWaiter;
        String failedWaiter = "";
        if (waiter.failed() != null) { // its acquisition gave up during the election: a new process must get it
            failedWaiter = "; the waiter's acquire failed (" + FileFaults.shorten(waiter.failed(), 90)
                    + "), a new process took over";
            waiter = t.worker();
            Trial.until(bound, waiter::holds);
        }
        if (!waiter.holds()) {
            return Outcome.unexpected(-1, "the holder released right after the leader was killed, and nobody got the"
                    + " lock within " + bound.toMillis() + " ms" + failedWaiter);
        }
        long ms = (t.enteredAt(waiter.token()) - at) / 1_000_000;
        waiter.inc(Trial.ANSWER);
        return t.judge(fault, ms, "waiter held " + ms + " ms after the leader's kill and the release" + failedWaiter);
    }

    /** A fault that happens to a server or a connection: runs in {@link #serverFault}. */
    @FunctionalInterface
    interface Fault {
        void inject() throws Exception;
    }

    /**
     * The holder (on {@code holderUri}) holds, a waiter (on the direct URI) waits, the fault
     * happens; then whoever holds increments the counter (the waiter first), the holder last.
     * The referee decides: an overlap of the two critical sections is a violation, documented or not.
     */
    static Outcome serverFault(Trial t, String fault, String holderUri, Fault inject) throws Exception {
        Worker holder = t.holder(holderUri);
        Worker firstWaiter = t.waiters(1, t.uri()).get(0);
        Worker waiter = firstWaiter;
        long at = t.mark(fault);
        inject.inject();
        long injected = t.mark("fault over");
        // After the fault: the waiter takes over (the holder lost it) or the holder keeps it.
        Duration settle = t.target().recoveryBound().plus(Target.LEASE);
        Trial.until(settle, () -> firstWaiter.holds() || holder.ended() || firstWaiter.failed() != null);
        String failedWaiter = "";
        if (waiter.failed() != null) { // its acquisition gave up on the server: a new process waits instead
            failedWaiter = "; the waiter's acquire failed (" + FileFaults.shorten(waiter.failed(), 90) + "), a new process took over";
            waiter = t.worker();
            Trial.until(Trial.START, waiter::acquiring);
        }
        Worker w0 = waiter;
        Trial.until(Duration.ofSeconds(2).plus(Target.LEASE), () -> holder.lost() || !w0.holds());
        String detail;
        long ms = -1;
        if (waiter.holds()) {
            ms = (t.enteredAt(waiter.token()) - at) / 1_000_000;
            String w = waiter.inc(Trial.ANSWER);
            String h = holder.inc(Trial.ANSWER);
            if (!"REFUSED".equals(h) && h != null) {
                return judgeOr(t, fault, ms, "the old holder's increment after the new holder's was " + h);
            }
            if (!holder.lost() && !Trial.until(Target.LEASE.plus(Target.SLACK), holder::lost)) {
                return judgeOr(t, fault, ms, "the old holder was never told it lost the lock (waiter " + w + ")");
            }
            detail = "holder told lost(), waiter held " + ms + " ms after the fault began, old holder's write refused";
        } else {
            String h = holder.inc(Trial.ANSWER);
            if (holder.lost()) {
                holder.release(Trial.ANSWER);
                if (!Trial.until(t.target().recoveryBound(), waiter::holds)) {
                    return Outcome.unexpected(-1, "the holder was told lost(), but nobody got the lock afterwards");
                }
                ms = (t.enteredAt(waiter.token()) - at) / 1_000_000;
                waiter.inc(Trial.ANSWER);
                detail = "holder told lost() (its write: " + h + "), waiter held " + ms + " ms after the fault began";
            } else {
                long released = System.nanoTime();
                holder.release(Trial.ANSWER);
                if (!Trial.until(t.target().recoveryBound(), waiter::holds)) {
                    return Outcome.unexpected(-1, "the holder kept its lock through the fault and released it, but the waiter "
                            + "did not get it within " + t.target().recoveryBound().toMillis() + " ms");
                }
                waiter.inc(Trial.ANSWER);
                detail = "the holder kept its lock through the fault (its write: " + h + "); waiter held "
                        + (t.enteredAt(waiter.token()) - released) / 1_000_000 + " ms after its release";
            }
        }
        return t.judge(fault, ms, detail + failedWaiter + " [fault " + (injected - at) / 1_000_000 + " ms]");
    }

    private static Outcome judgeOr(Trial t, String fault, long ms, String problem) throws IOException, InterruptedException {
        Outcome judged = t.judge(fault, ms, problem);
        return judged.verdict() == Outcome.Verdict.HELD ? Outcome.unexpected(ms, problem) : judged;
    }

    /** Eviction: fills the server's memory until the held lock's key is evicted (or gives up). */
    static Outcome evicted(Trial t, Filler filler) throws Exception {
        Worker holder = t.holder(t.uri());
        Worker waiter = t.waiters(1, t.uri()).get(0);
        long at = t.mark(FaultSuiteTest.EVICTION);
        long giveUp = System.nanoTime() + Duration.ofSeconds(25).toNanos();
        for (int round = 0; round < 200 && !waiter.holds() && System.nanoTime() < giveUp; round++) {
            filler.fill();
            Trial.until(Duration.ofMillis(20), waiter::holds);
        }
        if (!waiter.holds()) {
            holder.release(Trial.ANSWER);
            return t.judge(FaultSuiteTest.EVICTION, -1, "not reproduced: 25 s of filling never evicted the held lock's item (each renewal touches it)");
        }
        long ms = (t.enteredAt(waiter.token()) - at) / 1_000_000;
        String w = waiter.inc(Trial.ANSWER);
        String h = holder.inc(Trial.ANSWER);
        boolean told = Trial.until(Target.LEASE.plus(Target.SLACK), holder::lost);
        if (!"INC 1".equals(w) || !"REFUSED".equals(h) || !told) {
            return judgeOr(t, FaultSuiteTest.EVICTION, ms, "after the eviction: waiter " + w + ", old holder " + h
                    + ", old holder told lost(): " + told);
        }
        return t.judge(FaultSuiteTest.EVICTION, ms, "evicted; waiter held " + ms + " ms after the flood began; old holder told, write refused");
    }

    /** Fills a server's memory. */
    @FunctionalInterface
    interface Filler {
        void fill() throws IOException;
    }

    /** Sends a signal to a process and all its descendants (a PostgreSQL server is several processes). */
    static void signalTree(long pid, String signal) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("kill", "-" + signal, Long.toString(pid)));
        ProcessHandle.of(pid).ifPresent(p -> p.descendants().forEach(d -> command.add(Long.toString(d.pid()))));
        new ProcessBuilder(command).start().waitFor(10, TimeUnit.SECONDS);
    }

    private static Outcome withinBound(Trial t, long ms, Outcome judged) {
        Duration bound = t.target().recoveryBound();
        if (judged.verdict() == Outcome.Verdict.HELD && ms > bound.toMillis()) {
            return Outcome.unexpected(ms, "recovered after " + ms + " ms, documented bound " + t.target().documentedBound().toMillis()
                    + " ms + " + Target.SLACK.toSeconds() + " s slack");
        }
        return judged;
    }
}
