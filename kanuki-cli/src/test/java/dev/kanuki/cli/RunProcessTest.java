package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kanuki.testkit.PostgresServer;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * How {@code kanuki run} treats its command as a process, with real processes and real signals:
 * the command dies with kanuki, learns when the lock is lost, and gets each signal once.
 */
@Timeout(180)
@Tag("servers")
@Tag("slow")
class RunProcessTest {
    /** Writes its pid and its child's pid, then waits for the child. */
    private static final String PARENT_AND_CHILD =
            "echo $$ > cmd.pid; sleep 300 & echo $! > child.pid; wait";
    /**
     * Counts SIGINTs, SIGHUPs and SIGTERMs in the file 'signals'; dies of the first SIGTERM. It
     * waits with the {@code wait} builtin, which a trapped signal interrupts at once, so that two
     * copies of a signal are counted twice rather than merged while a foreground command runs.
     */
    private static final String COUNT_SIGNALS = "sleep 300 & s=$!; "
            + "trap 'echo INT >> signals' INT; trap 'echo HUP >> signals' HUP; "
            + "trap 'echo TERM >> signals; kill $s; trap - TERM; kill -s TERM $$' TERM; "
            + "touch started; while :; do wait $s; done";
    /**
     * Writes 'TERM' to the file 'told' on SIGTERM and exits 0. Its standard error goes to a file:
     * the shell reports its {@code sleep} killed by the same SIGTERM (sent to the whole group).
     */
    private static final String TRAP_TERM = "exec 2>cmd.err; trap 'echo TERM > told; exit 0' TERM; "
            + "touch started; while :; do sleep 0.05; done";

    @TempDir
    Path dir;
    private final List<Process> started = new ArrayList<>();

    @BeforeEach
    void needsTheLaunchTools() {
        assumeTrue(Processes.onPath("setpriv") && Processes.onPath("setsid"),
                "setpriv and setsid (util-linux) are not installed: kanuki runs commands unprotected");
    }

    @AfterEach
    void killLeftovers() {
        for (Process p : started) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    private String backend(String kind) {
        return switch (kind) {
            case "os" -> "file:" + dir.resolve("locks");
            case "mkdir" -> "file:" + dir.resolve("locks") + "?strategy=mkdir";
            case "postgresql" -> {
                PostgresServer server = PostgresServer.shared();
                yield server.kanukiUri(server.createDatabase("run_process")) + "&restartGrace=0";
            }
            default -> throw new IllegalArgumentException(kind);
        };
    }

    /**
     * SIGKILL of the kanuki JVM (as by the OOM killer) kills the command and the processes it
     * started at once, so the next holder never runs beside them.
     */
    @ParameterizedTest
    @ValueSource(strings = {"os", "mkdir", "postgresql"})
    void theCommandDiesWithKanuki(String kind) throws Exception {
        String uri = backend(kind);
        Cli.Running first = Cli.start(dir, "run", "-b", uri, "job", "--", "sh", "-c", PARENT_AND_CHILD);
        started.add(first.process);
        long cmd = Processes.pidIn(dir.resolve("cmd.pid"));
        long child = Processes.pidIn(dir.resolve("child.pid"));
        assertTrue(Processes.alive(cmd) && Processes.alive(child));

        first.process.destroyForcibly(); // SIGKILL: no shutdown hook, no release
        assertTrue(first.process.waitFor(60, TimeUnit.SECONDS), "the JVM survived SIGKILL");

        // The next holder checks, once it holds the lock, whether the first command still lives.
        // The kernel has already sent CMD its SIGKILL when the JVM was reaped, and the watcher
        // kills CMD's own children as soon as it runs: on a loaded machine that can take a moment
        // (docs/cli.md: "How `run` treats CMD"), so the check gives them up to 5 s (2 s was too short
        // once at load 25), never longer.
        String check = "i=0; while [ $i -lt 100 ]; do left=; for p in " + cmd + " " + child + "; do "
                + "s=$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null); "
                + "if [ -n \"$s\" ] && [ \"$s\" != Z ]; then left=\"$left $p\"; fi; done; "
                + "if [ -z \"$left\" ]; then echo alone; exit 0; fi; i=$((i+1)); sleep 0.05; done; "
                + "echo \"$left still runs\"; exit 1";
        Cli.Result next = Cli.run(dir, "run", "-w", "60s", "-b", uri, "job", "--", "sh", "-c", check);
        assertEquals("alone", next.out().trim(), () -> "the next holder ran beside the dead holder's command: "
                + next.out() + next.err());
        assertEquals(0, next.exitCode(), next::err);
        Processes.await(() -> !Processes.alive(cmd) && !Processes.alive(child), () -> "the command outlived kanuki");
    }

    /**
     * A holder stopped past its lease loses the lock to another process; when it resumes, its
     * command gets SIGTERM, and kanuki says so in one line naming the new holder and exits 76.
     */
    @Test
    void aLostLeaseTerminatesTheCommandAndExits76() throws Exception {
        String uri = backend("mkdir");
        Cli.Running first = Cli.start(dir, "run", "-b", uri, "--lease", "1s", "job", "--", "sh", "-c", TRAP_TERM);
        started.add(first.process);
        Processes.await(() -> Files.exists(dir.resolve("started")), () -> "the command did not start");

        Processes.kill("STOP", Long.toString(first.process.pid()));
        Cli.Running second;
        try {
            second = Cli.start(dir, "run", "-b", uri, "-w", "60s", "job", "--", "sh", "-c",
                    "touch second; while [ ! -e release ]; do sleep 0.05; done");
            started.add(second.process);
            Processes.await(() -> Files.exists(dir.resolve("second")), () -> "the second holder got no lock");
        } finally {
            Processes.kill("CONT", Long.toString(first.process.pid()));
        }

        Cli.Result lost = first.await();
        Files.writeString(dir.resolve("release"), "");
        assertEquals(ExitCodes.LOCK_LOST, lost.exitCode(), lost::err);
        assertEquals(List.of("TERM"), Processes.lines(dir.resolve("told")), "the command was not told");
        assertEquals(1, lost.errLines().size(), lost::err);
        String line = lost.errLines().get(0);
        assertTrue(line.startsWith("kanuki: lock 'job' was lost at "), line);
        assertTrue(line.contains("; now held by pid " + second.process.pid() + " on "), line);
        assertTrue(line.endsWith("sent SIGTERM to 'sh' (SIGKILL in 10s)"), line);
        assertEquals(0, second.await().exitCode());
    }

    /**
     * The lock is broken and the command exits before kanuki's watchdog notices (its next
     * renewal is up to 20 s away): the check before release finds the loss, kanuki says so and
     * exits 76 instead of the command's 0.
     */
    @Test
    void aLossSeenAfterTheCommandExitedStillExits76() throws Exception {
        String uri = backend("mkdir");
        Cli.Running first = Cli.start(dir, "run", "-b", uri, "--lease", "60s", "job", "--", "sh", "-c",
                "touch started; while [ ! -e finish ]; do sleep 0.05; done");
        started.add(first.process);
        Processes.await(() -> Files.exists(dir.resolve("started")), () -> "the command did not start");

        Cli.Result broken = Cli.run(dir, "break", "--force", "-b", uri, "job");
        assertEquals(0, broken.exitCode(), broken::err);
        Files.writeString(dir.resolve("finish"), "");

        Cli.Result lost = first.await();
        assertEquals(ExitCodes.LOCK_LOST, lost.exitCode(), lost::err);
        assertEquals(1, lost.errLines().size(), lost::err);
        assertTrue(lost.err().startsWith("kanuki: lock 'job' was lost at "), lost::err);
        assertTrue(lost.err().contains("; now free; "), lost::err);
    }

    /**
     * What the command gets when the lock is lost: {@code term} (SIGTERM, SIGKILL after
     * {@code --kill-after} for a command that ignores it), {@code kill}, or {@code ignore}; kanuki
     * exits 76 in every case.
     */
    @ParameterizedTest
    @ValueSource(strings = {"term", "kill", "ignore"})
    void onLostChoosesWhatTheCommandGets(String action) throws Exception {
        String uri = backend("mkdir");
        // The command notes SIGTERM and runs on; it ends by itself only when told to.
        Cli.Running run = Cli.start(dir, "run", "-b", uri, "--lease", "1s", "--on-lost", action,
                "--kill-after", "500ms", "job", "--", "sh", "-c", "exec 2>cmd.err; trap 'echo TERM >> told' TERM; "
                        + "touch started; while [ ! -e finish ]; do sleep 0.05; done; exit 3");
        started.add(run.process);
        Processes.await(() -> Files.exists(dir.resolve("started")), () -> "the command did not start");

        Cli.Result broken = Cli.run(dir, "break", "--force", "-b", uri, "job");
        assertEquals(0, broken.exitCode(), broken::err);
        Processes.await(() -> Processes.readQuietly(run.err).contains(" was lost at "),
                () -> "kanuki did not notice the loss");
        if (action.equals("ignore")) {
            assertTrue(run.process.isAlive(), "kanuki exited before its command");
            Files.writeString(dir.resolve("finish"), "");
        }

        Cli.Result lost = run.await();
        assertEquals(ExitCodes.LOCK_LOST, lost.exitCode(), lost::err);
        assertEquals(1, lost.errLines().size(), lost::err);
        String told = String.join(",", Processes.lines(dir.resolve("told")));
        switch (action) {
            case "term" -> {
                assertEquals("TERM", told, "one SIGTERM, then SIGKILL");
                assertTrue(lost.err().endsWith("sent SIGTERM to 'sh' (SIGKILL in 500ms)\n"), lost::err);
            }
            case "kill" -> {
                assertEquals("", told, "SIGKILL only");
                assertTrue(lost.err().endsWith("sent SIGKILL to 'sh'\n"), lost::err);
            }
            default -> {
                assertEquals("", told, "no signal");
                assertTrue(lost.err().endsWith("'sh' keeps running (--on-lost=ignore)\n"), lost::err);
            }
        }
    }

    /** The new options refuse bad values in one line, exit 2, before running anything. */
    @Test
    void badLossOptionsAreUsageErrors() throws Exception {
        String uri = backend("mkdir");
        for (String[] args : List.of(
                new String[] {"run", "-b", uri, "--on-lost", "stop", "job", "--", "touch", "ran"},
                new String[] {"run", "-b", uri, "--kill-after", "soon", "job", "--", "touch", "ran"},
                new String[] {"run", "-b", uri, "--lease", "50ms", "job", "--", "touch", "ran"},
                new String[] {"run", "-b", uri + "&lease=5s", "--lease", "10s", "job", "--", "touch", "ran"})) {
            Cli.Result r = Cli.run(dir, args);
            assertEquals(ExitCodes.USAGE, r.exitCode(), () -> String.join(" ", args) + ": " + r.err());
            assertEquals(1, r.errLines().size(), r::err);
            assertTrue(r.err().startsWith("kanuki: "), r::err);
        }
        assertFalse(Files.exists(dir.resolve("ran")), "a command ran");
    }

    /** A PostgreSQL session ended by the server (pg_terminate_backend) is a lost lock too. */
    @Test
    void anEndedDatabaseSessionTerminatesTheCommand() throws Exception {
        String uri = backend("postgresql");
        Cli.Running first = Cli.start(dir, "run", "-b", uri, "job", "--", "sh", "-c", TRAP_TERM);
        started.add(first.process);
        Processes.await(() -> Files.exists(dir.resolve("started")), () -> "the command did not start");

        Cli.Result broken = Cli.run(dir, "break", "--force", "-b", uri, "job"); // pg_terminate_backend
        assertEquals(0, broken.exitCode(), broken::err);

        Cli.Result lost = first.await();
        assertEquals(ExitCodes.LOCK_LOST, lost.exitCode(), lost::err);
        assertEquals(List.of("TERM"), Processes.lines(dir.resolve("told")), "the command was not told");
        assertEquals(1, lost.errLines().size(), lost::err);
        assertTrue(lost.err().startsWith("kanuki: lock 'job' was lost at "), lost::err);
    }

    /**
     * A signal to kanuki's whole process group (as Ctrl-C sends) and one to kanuki alone each
     * reach the command once; the command's death by SIGTERM is kanuki's exit code 143.
     */
    @Test
    void eachSignalReachesTheCommandOnce() throws Exception {
        Process kanuki = startInOwnGroup("run", "-b", backend("os"), "job", "--", "sh", "-c", COUNT_SIGNALS);
        String group = "-" + kanuki.pid();
        String alone = Long.toString(kanuki.pid());
        Path signals = dir.resolve("signals");
        Processes.await(() -> Files.exists(dir.resolve("started")), () -> "the command did not start");

        // After each SIGINT, a SIGHUP to kanuki alone: once the command has it, kanuki has passed
        // on every signal before it, so a second copy of the SIGINT would be counted by then.
        Processes.kill("INT", group);
        Processes.kill("HUP", alone);
        Processes.await(() -> count(signals, "HUP") == 1, () -> "SIGHUP to kanuki did not arrive");
        Processes.kill("INT", alone);
        Processes.kill("HUP", alone);
        Processes.await(() -> count(signals, "HUP") == 2, () -> "SIGHUP to kanuki did not arrive");
        Processes.kill("TERM", group);
        assertTrue(kanuki.waitFor(60, TimeUnit.SECONDS), "kanuki did not exit");

        List<String> received = Processes.lines(signals);
        assertEquals(2, count(signals, "INT"), received::toString);
        assertEquals(2, count(signals, "HUP"), received::toString);
        assertEquals(1, count(signals, "TERM"), received::toString);
        assertEquals(128 + 15, kanuki.exitValue(), () -> Processes.readQuietly(dir.resolve("kanuki.err")));
    }

    /**
     * In a terminal, Ctrl-C reaches the command once: the terminal sends SIGINT to the whole
     * foreground job, which the command stays in, and kanuki does not pass it on; SIGTERM to
     * kanuki alone is passed on. The terminal is a pseudo-terminal from script(1).
     */
    @Test
    void ctrlCInATerminalReachesTheCommandOnce() throws Exception {
        assumeTrue(Processes.onPath("script"), "script (util-linux) is not installed");
        StringBuilder line = new StringBuilder("exec env --default-signal");
        for (String word : javaCommand("run", "-b", backend("os"), "job", "--", "sh", "-c", COUNT_SIGNALS)) {
            line.append(" '").append(word.replace("'", "'\\''")).append("'");
        }
        Process terminal = new ProcessBuilder("script", "-q", "-e", "-c", line.toString(), "/dev/null")
                .directory(dir.toFile())
                .redirectOutput(dir.resolve("terminal.out").toFile())
                .redirectErrorStream(true)
                .start();
        started.add(terminal);
        Path signals = dir.resolve("signals");
        Processes.await(() -> Files.exists(dir.resolve("started")), () -> "the command did not start: "
                + Processes.readQuietly(dir.resolve("terminal.out")));
        ProcessHandle kanuki = terminal.descendants()
                .filter(h -> h.info().command().orElse("").endsWith("/java")).findFirst().orElseThrow();

        for (int n = 1; n <= 2; n++) {
            terminal.getOutputStream().write(3); // Ctrl-C
            terminal.getOutputStream().flush();
            int expected = n;
            Processes.await(() -> count(signals, "INT") >= expected, () -> "Ctrl-C did not reach the command");
        }
        Processes.kill("TERM", Long.toString(kanuki.pid()));
        assertTrue(terminal.waitFor(60, TimeUnit.SECONDS), "kanuki did not exit");

        List<String> received = Processes.lines(signals);
        assertEquals(List.of("INT", "INT", "TERM"), received);
        assertEquals(128 + 15, terminal.exitValue(), () -> Processes.readQuietly(dir.resolve("terminal.out")));
    }

    private static long count(Path file, String signal) {
        return Processes.lines(file).stream().filter(signal::equals).count();
    }

    /**
     * A command killed by signal N makes kanuki exit 128+N: SIGHUP passed on by kanuki, SIGKILL sent to it.
     * kanuki starts with default signal dispositions, as from a shell: a JVM that inherits SIGHUP
     * ignored (this test run under nohup, say) keeps ignoring it, as nohup asks, and this test
     * would wait for nothing.
     */
    @Test
    void aCommandKilledBySignalNExits128PlusN() throws Exception {
        Process hup = startInOwnGroup("run", "-b", backend("os"), "hup", "--", "sh", "-c",
                "echo $$ > hup.pid; exec sleep 300");
        Processes.pidIn(dir.resolve("hup.pid"));
        Processes.kill("HUP", Long.toString(hup.pid()));
        assertTrue(hup.waitFor(60, TimeUnit.SECONDS), "kanuki did not exit after SIGHUP");
        String hupErr = Processes.readQuietly(dir.resolve("kanuki.err"));
        assertEquals(128 + 1, hup.exitValue(), hupErr);
        assertEquals("", hupErr);

        Cli.Running run = Cli.start(dir, "run", "-b", backend("os"), "job", "--", "sh", "-c",
                "echo $$ > cmd.pid; exec sleep 300");
        started.add(run.process);
        Processes.kill("KILL", Long.toString(Processes.pidIn(dir.resolve("cmd.pid"))));
        Cli.Result killed = run.await();
        assertEquals(128 + 9, killed.exitCode(), killed::err);
        assertEquals("", killed.err());
    }

    /** @return the command line that runs kanuki with {@code args} in a JVM on the test class path */
    private static List<String> javaCommand(String... args) {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                KanukiCli.class.getName()));
        command.addAll(List.of(args));
        return command;
    }

    /**
     * Starts kanuki as the leader of its own session and process group, with default signal
     * dispositions (a shell running a job in the background would have it ignore SIGINT).
     */
    private Process startInOwnGroup(String... args) throws IOException {
        List<String> command = new ArrayList<>(List.of("setsid", "env", "--default-signal"));
        command.addAll(javaCommand(args));
        Process process = new ProcessBuilder(command)
                .directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(dir.resolve("kanuki.out").toFile())
                .redirectError(dir.resolve("kanuki.err").toFile())
                .start();
        started.add(process);
        return process;
    }
}
