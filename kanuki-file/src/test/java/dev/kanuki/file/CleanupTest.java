package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Lock directories stay small: a name nobody holds leaves no file once released; what stays is
 * the directory's fencing counter and its marker.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Tag("slow")
class CleanupTest {
    @TempDir
    Path tempDir;

    @ParameterizedTest
    @ValueSource(strings = {"os", "mkdir", "symlink", "rename", "create", "queue"})
    void distinctNamesLeaveAtMostTheCounter(String strategy) throws Exception {
        Path dir = Files.createDirectories(tempDir.resolve("locks"));
        try (LockProvider provider = LockProvider.open("file:" + dir + "?strategy=" + strategy)) {
            for (int i = 0; i < 2_000; i++) {
                try (LockHandle h = provider.lock("job-" + i).acquire(Duration.ofSeconds(10))) {
                    assertTrue(h.fencingToken() > 0);
                }
            }
            if (!strategy.equals("queue")) {
                for (int i = 0; i < 50; i++) {
                    provider.semaphore("sem-" + i, 3).acquire(Duration.ofSeconds(10)).close();
                }
            }
            if (strategy.equals("os")) {
                for (int i = 0; i < 50; i++) {
                    provider.readWriteLock("read-" + i).readLock().acquire(Duration.ofSeconds(10)).close();
                }
            }
            List<String> left;
            try (Stream<Path> files = Files.list(dir)) {
                left = files.map(p -> p.getFileName().toString()).sorted().toList();
            }
            assertTrue(left.size() <= 10, left.size() + " files left, for example " + left.subList(0, Math.min(10, left.size())));
            assertEquals(List.of(), provider.list(), "released locks are still listed");
        }
    }
}
