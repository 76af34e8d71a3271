package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code kanuki run --max-time}: a command that runs too long gets SIGTERM, then SIGKILL after
 * {@code --kill-after}; the lock is released only once it is gone; one line says so; exit 124.
 * The next holder checks, once it holds the lock, that the first command is gone: no clock decides.
 */
@Timeout(180)
@Tag("slow")
class RunMaxTimeTest {
    /** Ignores SIGTERM (notes it in 'told') and runs until killed. */
    private static final String IGNORES_TERM = "exec 2>cmd.err; echo $$ > cmd.pid; trap 'echo TERM >> told' TERM; "
            + "while :; do sleep 0.2; done";

    @TempDir
    Path dir;
    private final List<Process> started = new ArrayList<>();

    @BeforeEach
    void needsTheLaunchTools() {
        assumeTrue(Processes.onPath("setpriv") && Processes.onPath("setsid"),
                "setpriv and setsid (util-linux) are not installed");
    }

    @AfterEach
    void killLeftovers() {
        for (Process p : started) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    private String backend(String kind) {
        return kind.equals("os") ? "file:" + dir.resolve("locks") : "file:" + dir.resolve("locks") + "?strategy=" + kind;
    }

    /** A ttl strategy (mkdir) and a session backend (os), with a command that ignores SIGTERM. */
    @ParameterizedTest
    @ValueSource(strings = {"mkdir", "os"})
    void aCommandPastItsMaxTimeIsKilledAndOnlyThenIsTheLockReleased(String kind) throws Exception {
        String uri = backend(kind);
        // --kill-after 20s: a release before the command is gone would let the next holder in
        // well inside it, however slowly its JVM starts.
        Cli.Running first = Cli.start(dir, "run", "-b", uri, "--max-time", "1s", "--kill-after", "20s",
                "job", "--", "sh", "-c", IGNORES_TERM);
        started.add(first.process);
        long cmd = Processes.pidIn(dir.resolve("cmd.pid"));
        Processes.await(() -> Files.exists(dir.resolve("told")), () -> "the command got no SIGTERM");

        // Waits for the lock; once it holds it, the first command must be gone.
        String check = "s=$(cut -d' ' -f3 /proc/" + cmd + "/stat 2>/dev/null); "
                + "if [ -n \"$s\" ] && [ \"$s\" != Z ]; then echo \"" + cmd + " still runs\"; exit 1; fi; echo alone";
        Cli.Result next = Cli.run(dir, "run", "-w", "60s", "-b", uri, "job", "--", "sh", "-c", check);
        assertEquals("alone", next.out().trim(), () -> "the next holder ran beside the timed-out command: "
                + next.out() + next.err());
        assertEquals(0, next.exitCode(), next::err);

        Cli.Result r = first.await();
        assertEquals(ExitCodes.MAX_TIME, r.exitCode(), r::err);
        assertEquals(1, r.errLines().size(), r::err);
        String line = r.errLines().get(0);
        assertTrue(line.startsWith("kanuki: 'sh' ran past --max-time 1s: sent SIGTERM at "), line);
        assertTrue(line.contains(", SIGKILL at ") && line.endsWith("; lock 'job' released after it exited"), line);
        assertEquals(List.of("TERM"), Processes.lines(dir.resolve("told")), "one SIGTERM");
    }

    /** A command that ends within its maximum time keeps its own exit code; one that obeys SIGTERM gets no SIGKILL. */
    @Test
    void aCommandWithinItsTimeKeepsItsCodeAndOneObeyingTermIsNotKilled() throws Exception {
        String uri = backend("os");
        Cli.Result quick = Cli.run(dir, "run", "-b", uri, "--max-time", "60s", "job", "--", "sh", "-c", "exit 3");
        assertEquals(3, quick.exitCode(), quick::err);
        assertEquals("", quick.err());

        Cli.Result slow = Cli.run(dir, "run", "-b", uri, "--max-time=1s", "job", "--", "sleep", "300");
        assertEquals(ExitCodes.MAX_TIME, slow.exitCode(), slow::err);
        assertEquals(1, slow.errLines().size(), slow::err);
        assertTrue(slow.err().startsWith("kanuki: 'sleep' ran past --max-time 1s: sent SIGTERM at "), slow::err);
        assertTrue(!slow.err().contains("SIGKILL"), slow::err);
    }

    /** A maximum time of zero is a usage error, before anything runs. */
    @Test
    void aZeroMaxTimeIsAUsageError() throws Exception {
        Cli.Result r = Cli.run(dir, "run", "-b", backend("os"), "--max-time", "0s", "job", "--", "touch", "ran");
        assertEquals(ExitCodes.USAGE, r.exitCode(), r::err);
        assertEquals(1, r.errLines().size(), r::err);
        assertTrue(!Files.exists(dir.resolve("ran")));
    }
}
