package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The commands that only look (status, prune, break) do not create a {@code file:} or
 * {@code sqlite:} directory that is not there (a mistyped path would be left behind, and the
 * answer "no locks" would hide the typo), and {@code prune} on {@code sqlite:} says what it leaves
 * and why instead of "leaves nothing behind".
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class InspectionLeavesNoTraceTest {
    @TempDir
    Path dir;

    @Test
    void inspectingAMissingDirectoryDoesNotCreateIt() throws Exception {
        Path missing = dir.resolve("no").resolve("such");
        for (String backend : List.of("file:" + missing, "file:" + missing + "?strategy=mkdir", "sqlite:" + missing)) {
            for (List<String> args : List.of(List.of("status", "-b", backend), List.of("status", "-b", backend, "job"),
                    List.of("prune", "-b", backend), List.of("break", "-b", backend, "job"))) {
                Cli.Result r = Cli.run(dir, args.toArray(String[]::new));
                assertEquals(0, r.exitCode(), () -> args + ": " + r.err());
                assertTrue(r.err().contains("no such directory " + missing), () -> args + ": " + r.err());
                assertEquals(1, r.errLines().size(), () -> args + ": " + r.err());
                assertFalse(Files.exists(dir.resolve("no")), () -> args + " created the directory");
            }
        }
        Cli.Result named = Cli.run(dir, "status", "-b", "file:" + missing, "job");
        assertTrue(named.out().lines().anyMatch(l -> l.startsWith("job") && l.contains("free")), named::out);
    }

    @Test
    void sqlitePruneSaysWhatItLeavesAndWhy() throws Exception {
        String backend = "sqlite:" + dir.resolve("locks");
        for (String name : List.of("a", "b", "c")) {
            Cli.Result run = Cli.run(dir, "run", "-b", backend, name, "--", "true");
            assertEquals(0, run.exitCode(), run::err);
        }
        Cli.Result prune = Cli.run(dir, "prune", "-b", backend);
        assertEquals(3, prune.exitCode(), prune::err);
        assertEquals(1, prune.errLines().size(), prune::err);
        assertFalse(prune.err().contains("nothing behind"), prune::err);
        assertTrue(prune.err().contains("one database per lock name (3 in"), prune::err);
        assertTrue(prune.err().contains("fencing token"), prune::err);
    }
}
