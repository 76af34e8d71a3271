package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The {@code kanuki} command end to end: each test starts the real command in child JVMs against
 * a {@code file:} backend in a temporary directory.
 */
@Timeout(120)
@Tag("slow")
class KanukiCliTest {
    @TempDir
    Path dir;
    String backend;

    @BeforeEach
    void backend() {
        backend = "file:" + dir.resolve("locks");
    }

    @Test
    void runPassesOnTheExitCodeAndExportsTheLock() throws Exception {
        Cli.Result r = Cli.run(dir, "run", "-b", backend, "job", "--",
                "sh", "-c", "echo \"$KANUKI_LOCK_NAME $KANUKI_FENCING_TOKEN\" > env.txt; exit 7");

        assertEquals(7, r.exitCode(), r::err);
        String[] env = Files.readString(dir.resolve("env.txt")).trim().split(" ");
        assertEquals("job", env[0]);
        assertTrue(Long.parseLong(env[1]) > 0, "fencing token " + env[1]);
        assertEquals("", r.err());
    }

    @Test
    void aHeldLockMakesOthersBusyAndSignalsReachTheCommand() throws Exception {
        Cli.Running holder = Cli.start(dir, "run", "-b", backend, "job", "--",
                "sh", "-c", "touch started; exec sleep 60");
        awaitFile(dir.resolve("started"), holder);
        try {
            Cli.Result busy = Cli.run(dir, "run", "-b", backend, "-n", "job", "--", "touch", "ran");
            assertEquals(75, busy.exitCode(), busy::err);
            assertFalse(Files.exists(dir.resolve("ran")), "the command ran without the lock");
            assertEquals(1, busy.errLines().size(), busy::err);
            assertTrue(busy.err().startsWith("kanuki: lock 'job' is busy (held by pid " + holder.process.pid()
                    + " on "), busy::err);
            assertTrue(busy.elapsed().compareTo(Duration.ofSeconds(10)) < 0, "-n waited " + busy.elapsed());

            Cli.Result custom = Cli.run(dir, "run", "-b", backend, "--conflict-exit-code", "9", "-n", "job",
                    "--", "touch", "ran");
            assertEquals(9, custom.exitCode(), custom::err);
            assertFalse(Files.exists(dir.resolve("ran")));

            Cli.Result waited = Cli.run(dir, "run", "-b", backend, "-w", "500ms", "job", "--", "touch", "ran");
            assertEquals(75, waited.exitCode(), waited::err);
            assertFalse(Files.exists(dir.resolve("ran")));
            assertTrue(waited.elapsed().compareTo(Duration.ofMillis(500)) >= 0, "-w 500ms took " + waited.elapsed());
            assertTrue(waited.elapsed().compareTo(Duration.ofSeconds(15)) < 0, "-w 500ms took " + waited.elapsed());

            Cli.Result status = Cli.run(dir, "status", "-b", backend, "job");
            assertEquals(0, status.exitCode(), status::err);
            List<String> table = status.out().lines().toList();
            assertEquals(2, table.size(), status::out);
            assertTrue(table.get(1).matches("job +held +os +" + holder.process.pid() + "@\\S+ +\\S+ +session +\\d+"),
                    status::out);
        } finally {
            // SIGTERM to kanuki is passed on to `sleep`, which dies of it: 128 + 15.
            holder.process.destroy();
        }
        Cli.Result held = holder.await();
        assertEquals(143, held.exitCode(), held::err);

        Cli.Result free = Cli.run(dir, "status", "-b", backend, "--json", "job");
        assertTrue(free.out().startsWith("[{\"name\":\"job\",\"state\":\"free\","), free::out);
    }

    @Test
    void concurrentRunsLoseNoIncrement() throws Exception {
        Path counter = dir.resolve("counter");
        Files.writeString(counter, "0");
        String increment = "n=$(cat counter); sleep 0.02; echo $((n + 1)) > counter";
        List<Cli.Running> runs = new ArrayList<>();
        int processes = 8;
        for (int i = 0; i < processes; i++) {
            runs.add(Cli.start(dir, "run", "-b", backend, "-w", "60s", "counter", "--", "sh", "-c", increment));
        }
        for (Cli.Running run : runs) {
            Cli.Result r = run.await();
            assertEquals(0, r.exitCode(), r::err);
        }
        assertEquals(Integer.toString(processes), Files.readString(counter).trim());
    }

    @Test
    void aCommandThatCannotStartExits127() throws Exception {
        Cli.Result r = Cli.run(dir, "run", "-b", backend, "job", "--", "/no/such/command");
        assertEquals(127, r.exitCode(), r::err);
        assertEquals(List.of("kanuki: cannot run '/no/such/command': No such file or directory"), r.errLines());
    }

    @Test
    void userErrorsExit2WithOneLine() throws Exception {
        for (String[] args : List.of(
                new String[] {"run", "-b", "nosuch:x", "job", "--", "true"},
                new String[] {"run", "-b", "no-scheme", "job", "--", "true"},
                new String[] {"run", "-w", "five", "job", "--", "true"},
                new String[] {"run", "--no-such-option", "job", "--", "true"},
                new String[] {"status", "-b", backend, ""})) {
            Cli.Result r = Cli.run(dir, args);
            assertEquals(2, r.exitCode(), () -> String.join(" ", args) + ": " + r.err());
            assertEquals(1, r.errLines().size(), () -> String.join(" ", args) + ": " + r.err());
            assertTrue(r.err().startsWith("kanuki: "), r::err);
        }
    }

    @Test
    void versionNamesTheBuild() throws Exception {
        Cli.Result r = Cli.run(dir, "--version");
        assertEquals(0, r.exitCode(), r::err);
        assertTrue(r.out().trim().matches("kanuki \\d+\\.\\d+\\.\\d+.*"), r::out);
    }

    @Test
    void tortureUnderTheLockPassesAndWithoutItFails() throws Exception {
        Cli.Result locked = Cli.run(dir, "torture", "-b", backend, "--procs", "2", "--iterations", "100", "--json");
        assertEquals(0, locked.exitCode(), locked::err);
        assertTrue(locked.out().contains("\"expected\":200,\"actual\":200,"), locked::out);
        assertTrue(locked.out().contains("\"passed\":true"), locked::out);

        Cli.Result unlocked = Cli.run(dir, "torture", "-b", "none", "--procs", "3", "--iterations", "100",
                "--hold", "1ms", "--dir", dir.resolve("unlocked").toString());
        assertEquals(1, unlocked.exitCode(), unlocked::err);
        assertTrue(unlocked.out().contains("FAIL: "), unlocked::out);
        assertTrue(Files.exists(dir.resolve("unlocked").resolve("overlap.log")), "--dir is kept");
    }

    /** Stopped by a signal mid-run (as by Ctrl-C), torture leaves no worker and no temporary directory behind. */
    @Test
    void tortureStoppedBySignalLeavesNothingBehind() throws Exception {
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        Cli.Running torture = Cli.start(dir, List.of("-Djava.io.tmpdir=" + tmp), "torture", "-b", backend,
                "--procs", "2", "--iterations", "1000000", "--hold", "1ms");
        Path go = null;
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (go == null) {
            try (var dirs = Files.list(tmp)) {
                go = dirs.map(d -> d.resolve("barrier").resolve("go")).filter(Files::exists).findFirst().orElse(null);
            }
            assertTrue(torture.process.isAlive(), () -> "torture exited early: " + readQuietly(torture.err));
            assertTrue(System.nanoTime() < deadline, "the workers did not start within 60s");
            Thread.sleep(50);
        }
        List<ProcessHandle> workers = torture.process.descendants().toList();
        assertEquals(2, workers.size(), "two worker JVMs run");
        torture.process.destroy(); // SIGTERM: the JVM runs its shutdown hooks, not the command's finally
        torture.await();
        for (ProcessHandle worker : workers) {
            worker.onExit().get(30, java.util.concurrent.TimeUnit.SECONDS);
        }
        try (var left = Files.walk(tmp)) {
            List<Path> leftovers = left.filter(p -> !p.equals(tmp)).toList();
            assertEquals(List.of(), leftovers, () -> "the temporary directory was left behind; kanuki said: "
                    + readQuietly(torture.err));
        }
    }

    private static String readQuietly(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (java.io.IOException e) {
            return e.toString();
        }
    }

    private static void awaitFile(Path file, Cli.Running owner) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!Files.exists(file)) {
            if (!owner.process.isAlive()) {
                throw new AssertionError("kanuki exited with " + owner.process.exitValue() + ": "
                        + Files.readString(owner.err, StandardCharsets.UTF_8));
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(file + " did not appear within 30s");
            }
            Thread.sleep(20);
        }
    }
}
