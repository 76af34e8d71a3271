package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Many processes waiting for one name, every strategy: all are served (none times out), and a
 * counter incremented under the lock is exact. {@code -Dkanuki.manyProcesses=40} for more; the
 * full 200-process check is {@code kanuki-file/src/test/many-waiters.sh}.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Tag("slow")
class ManyProcessesTest {
    private static final int PROCESSES = Integer.getInteger("kanuki.manyProcesses", 8);
    private static final int ROUNDS = 1;

    @TempDir
    Path tempDir;

    @ParameterizedTest
    @ValueSource(strings = {"os", "mkdir", "symlink", "rename", "create", "queue"})
    void everyWaitingProcessIsServed(String strategy) throws Exception {
        Path dir = Files.createDirectories(tempDir.resolve("locks"));
        Path counters = Files.createDirectories(tempDir.resolve("counters"));
        List<Process> processes = new ArrayList<>();
        for (int i = 0; i < PROCESSES; i++) {
            processes.add(PruneWorkerMain.start(tempDir, "count", "file:" + dir + "?strategy=" + strategy,
                    counters.toString(), Integer.toString(ROUNDS), "board"));
        }
        int served = 0;
        for (Process p : processes) {
            served += p.waitFor() == 0 ? 1 : 0; // a waiter not served within its 60 s exits non-zero
        }
        assertEquals(PROCESSES, served, "waiting processes served; stderr in " + tempDir);
        assertEquals((long) PROCESSES * ROUNDS, Long.parseLong(Files.readString(counters.resolve("board")).trim()),
                "an increment under the lock was lost");
    }
}
