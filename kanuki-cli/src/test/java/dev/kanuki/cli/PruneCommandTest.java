package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code kanuki prune}: lists, then removes, what a SIGKILLed holder left; says so when a backend leaves nothing. */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class PruneCommandTest {
    @TempDir
    Path dir;

    @Test
    void pruneRemovesWhatAKilledHolderLeft() throws Exception {
        Path locks = Files.createDirectories(dir.resolve("locks"));
        String backend = "file:" + locks + "?strategy=mkdir";
        Cli.run(dir, "run", "-b", backend, "nightly", "--", "sh", "-c", "kill -9 $PPID"); // the holder dies, its entry stays
        assertEquals(1, entries(locks).size(), "the killed holder's entry: " + entries(locks));

        Cli.Result dry = Cli.run(dir, "prune", "-b", backend, "--dry-run");
        assertEquals(0, dry.exitCode(), dry::err);
        assertTrue(dry.out().contains("would remove 1 file"), dry::out);
        assertEquals(1, entries(locks).size(), "a dry run removed something");

        Cli.Result json = Cli.run(dir, "prune", "-b", backend, "--json");
        assertEquals(0, json.exitCode(), json::err);
        assertTrue(json.out().contains("\"count\":1") && json.out().contains(".lockdir"), json::out);
        assertEquals(List.of(), entries(locks));

        Cli.Result none = Cli.run(dir, "prune", "-b", "mem:");
        assertEquals(3, none.exitCode());
        assertEquals(1, none.err().strip().lines().count(), "one line, no stack trace: " + none.err());

        Cli.Result help = Cli.run(dir, "--help");
        assertTrue(help.out().contains("prune"), help::out);
        assertFalse(Cli.run(dir, "completion", "bash").out().indexOf("prune") < 0, "completion lacks prune");
    }

    /** @return the lock directory's files other than the fencing counter */
    private static List<String> entries(Path locks) throws Exception {
        try (Stream<Path> s = Files.list(locks)) {
            return s.map(p -> p.getFileName().toString()).filter(n -> !n.startsWith("kanuki-fence")).toList();
        }
    }
}
