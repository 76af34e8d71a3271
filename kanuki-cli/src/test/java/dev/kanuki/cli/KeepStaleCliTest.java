package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code keepStale=true} from the command line: the lock of a SIGKILLed {@code kanuki run} is
 * kept; the next run fails at once (not after its -w) with one line naming the dead holder and
 * the break command; status shows STALE (KEPT); the printed command breaks it.
 */
@Timeout(180)
@Tag("slow")
class KeepStaleCliTest {
    @TempDir
    Path dir;
    private final List<Process> started = new ArrayList<>();

    @AfterEach
    void killLeftovers() {
        for (Process p : started) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }

    @Test
    void aKilledHoldersLockIsKeptUntilTheCommandItNamesBreaksIt() throws Exception {
        String uri = "file:" + dir.resolve("locks") + "?strategy=mkdir&keepStale=true";
        Cli.Running holder = Cli.start(dir, "run", "-b", uri, "job", "--", "sh", "-c", "touch started; sleep 300");
        started.add(holder.process);
        Processes.await(() -> Files.exists(dir.resolve("started")), () -> "the holder did not start");
        long pid = holder.process.pid();
        holder.process.destroyForcibly(); // SIGKILL: no release
        assertTrue(holder.process.waitFor(60, TimeUnit.SECONDS), "the JVM survived SIGKILL");

        // -w 10m: a run that waited instead of failing at once would outlast Cli's 60 s limit.
        Cli.Result refused = Cli.run(dir, "run", "-w", "10m", "-b", uri, "job", "--", "touch", "ran");
        assertEquals(ExitCodes.BACKEND, refused.exitCode(), refused::err);
        assertEquals(1, refused.errLines().size(), refused::err);
        String line = refused.errLines().get(0);
        assertTrue(line.startsWith("kanuki: lock 'job' is stale and kept (keepStale=true): its holder, pid " + pid + " on "),
                line);
        assertTrue(line.contains(" since ") && line.contains("is gone: "), line);
        assertFalse(Files.exists(dir.resolve("ran")), "the command ran");

        Cli.Result status = Cli.run(dir, "status", "-b", uri, "job");
        assertEquals(0, status.exitCode(), status::err);
        assertTrue(status.out().contains("STALE (KEPT)") && status.out().contains(pid + "@"), status.out());
        Cli.Result json = Cli.run(dir, "status", "--json", "-b", uri, "job");
        assertTrue(json.out().contains("\"state\":\"stale\"") && json.out().contains(",\"kept\":true}"), json.out());

        String marker = "break it with: ";
        String breakCommand = line.substring(line.indexOf(marker) + marker.length(), line.length() - 1);
        assertTrue(breakCommand.startsWith("kanuki break -b '"), breakCommand);
        Cli.Running broken = Cli.startShell(dir, Map.of(), breakCommand.replaceFirst("^kanuki", "\"\\$KANUKI\""));
        Cli.Result brokenResult = broken.await();
        assertEquals(0, brokenResult.exitCode(), () -> breakCommand + ": " + brokenResult.err() + brokenResult.out());

        Cli.Result next = Cli.run(dir, "run", "-n", "-b", uri, "job", "--", "touch", "ran");
        assertEquals(0, next.exitCode(), next::err);
        assertTrue(Files.exists(dir.resolve("ran")));
    }

    /** A backend that cannot keep stale locks refuses the option in one line, exit 2. */
    @Test
    void keepStaleIsRefusedWhereItCannotBeKept() throws Exception {
        for (String uri : List.of("file:" + dir.resolve("os") + "?keepStale=true",
                "file:" + dir.resolve("q") + "?strategy=queue&keepStale=true")) {
            Cli.Result r = Cli.run(dir, "run", "-n", "-b", uri, "job", "--", "touch", "ran");
            assertEquals(ExitCodes.USAGE, r.exitCode(), r::err);
            assertEquals(1, r.errLines().size(), r::err);
            assertTrue(r.err().startsWith("kanuki: keepStale=true in '") && r.err().contains("cannot keep stale locks"),
                    r::err);
        }
        assertFalse(Files.exists(dir.resolve("ran")));
    }
}
