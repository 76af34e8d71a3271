package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code kanuki run -w forever}: a standby beside a running {@code kanuki run} of the same lock
 * runs its command once the first one dies (SIGKILL, as a crash), never beside the first one's
 * command, with a higher fencing token; on a session strategy ({@code os}) and a ttl one
 * ({@code mkdir}, where the dead holder's pid shows its lock stale).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Tag("slow")
class RunStandbyTest {
    /** The leader's command: its pid and token to files, then runs until killed. */
    private static final String LEADER = "echo $$ > leader.pid; echo $KANUKI_FENCING_TOKEN > leader.token; "
            + "exec sleep 600";

    @TempDir
    Path dir;
    private final List<Process> started = new ArrayList<>();

    @BeforeEach
    void needsTheLaunchTools() {
        assumeTrue(Processes.onPath("setpriv") && Processes.onPath("setsid"),
                "setpriv and setsid (util-linux) are not installed: a killed kanuki leaves its command running");
    }

    @AfterEach
    void killLeftovers() {
        for (Process p : started) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"os", "mkdir"})
    void aStandbyRunsItsCommandWhenTheHolderDies(String strategy) throws Exception {
        String uri = "file:" + dir.resolve("locks") + "?strategy=" + strategy;
        Cli.Running leader = Cli.start(dir, "run", "-b", uri, "jobs", "--", "sh", "-c", LEADER);
        started.add(leader.process);
        long leaderCmd = Processes.pidIn(dir.resolve("leader.pid"));
        long leaderToken = Processes.pidIn(dir.resolve("leader.token"));

        // The standby's command says whether the leader's command still ran when it started.
        String standbyCmd = "if [ -d /proc/" + leaderCmd + " ] && [ \"$(cut -d' ' -f3 /proc/" + leaderCmd
                + "/stat 2>/dev/null)\" != Z ]; then echo beside; else echo alone $KANUKI_FENCING_TOKEN; fi";
        Cli.Running standby = Cli.start(dir, "run", "-w", "forever", "-b", uri, "jobs", "--", "sh", "-c", standbyCmd);
        started.add(standby.process);
        assertTrue(standby.process.isAlive(), "the standby ended while the leader held the lock");

        leader.process.destroyForcibly(); // SIGKILL: no release by kanuki; the kernel ends its lock and command
        assertTrue(leader.process.waitFor(60, TimeUnit.SECONDS), "the leader survived SIGKILL");
        Cli.Result result = standby.await();
        assertEquals(0, result.exitCode(), result::err);
        String[] out = result.out().trim().split(" ");
        assertEquals("alone", out[0], () -> "the standby ran beside the dead leader's command: " + result.out());
        assertTrue(Long.parseLong(out[1]) > leaderToken, "the standby's token " + out[1] + " after " + leaderToken);
    }
}
