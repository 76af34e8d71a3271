package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.kanuki.LockProvider;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code prune} removes what SIGKILLed holders left on 100 names, while other processes lock and
 * unlock some of the same names and others: no acquisition is ever broken (a counter incremented
 * under the lock stays exact), and afterwards the directory is back to a handful of files.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Tag("slow")
class PruneTest {
    private static final int CRASHED = 100;
    private static final int WORKERS = 2;
    private static final int ITERATIONS = 60;

    @TempDir
    Path tempDir;

    @ParameterizedTest
    @ValueSource(strings = {"os", "mkdir", "symlink", "rename", "create", "queue"})
    void pruneRemovesCrashedHoldersFilesWithoutBreakingAnyLock(String strategy) throws Exception {
        Path dir = Files.createDirectories(tempDir.resolve("locks"));
        Path counters = Files.createDirectories(tempDir.resolve("counters"));
        String uri = "file:" + dir + "?strategy=" + strategy;
        Process holder = start("hold", uri, "crash", Integer.toString(CRASHED));
        String said = new BufferedReader(new InputStreamReader(holder.getInputStream(), StandardCharsets.UTF_8)).readLine();
        assertEquals("HELD " + CRASHED, said, "the holder took its locks");
        holder.destroyForcibly(); // SIGKILL: nothing is released
        assertTrue(holder.waitFor(60, TimeUnit.SECONDS));
        assertTrue(files(dir) >= CRASHED, "the killed holder left its files: " + files(dir));

        List<String> names = new ArrayList<>(List.of("crash0", "crash1", "crash2", "other0", "other1"));
        List<Process> workers = new ArrayList<>();
        for (int i = 0; i < WORKERS; i++) {
            List<String> args = new ArrayList<>(List.of("count", uri, counters.toString(), Integer.toString(ITERATIONS)));
            args.addAll(names);
            workers.add(start(args.toArray(String[]::new)));
        }
        int pruned = 0;
        try (LockProvider provider = LockProvider.open(uri)) {
            while (workers.stream().anyMatch(Process::isAlive)) {
                pruned += provider.prune(false).size(); // again and again while the workers lock and unlock
            }
            for (Process w : workers) {
                int exit = w.waitFor();
                if (exit != 0) {
                    fail("a worker failed (exit " + exit + "); its stderr: " + workerErrors()); // the temp dir goes with the test
                }
            }
            pruned += provider.prune(false).size();
            assertEquals(List.of(), provider.prune(true), "a dry run after pruning finds nothing");
        }
        long counted = 0;
        for (String name : names) {
            Path c = counters.resolve(name);
            counted += Files.exists(c) ? Long.parseLong(Files.readString(c).trim()) : 0;
        }
        assertEquals((long) WORKERS * ITERATIONS, counted, "an increment under the lock was lost: a lock was broken");
        assertTrue(pruned >= CRASHED - 3, "pruned " + pruned);
        assertTrue(files(dir) <= 10, files(dir) + " files left: " + list(dir));
    }

    private String workerErrors() throws Exception {
        StringBuilder errors = new StringBuilder();
        try (Stream<Path> s = Files.list(tempDir)) {
            for (Path err : s.filter(p -> p.getFileName().toString().endsWith(".err")).toList()) {
                String text = Files.readString(err).strip();
                if (!text.isEmpty()) {
                    errors.append('\n').append(err.getFileName()).append(": ").append(text, 0, Math.min(text.length(), 4000));
                }
            }
        }
        return errors.toString();
    }

    private Process start(String... args) throws Exception {
        return PruneWorkerMain.start(tempDir, args);
    }

    private static long files(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.count();
        }
    }

    private static List<String> list(Path dir) throws Exception {
        try (Stream<Path> s = Files.list(dir)) {
            return s.map(p -> p.getFileName().toString()).limit(12).toList();
        }
    }
}
