package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An acquisition that fails after its entry was created (here: the fencing counter cannot
 * move, because a directory sits where its next value goes) removes what it created: the next
 * acquirer gets the lock at once, long before any lease runs out.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FailedAcquisitionTest {
    @TempDir
    Path tempDir;

    @ParameterizedTest
    @ValueSource(strings = {"os", "mkdir", "symlink", "rename", "create", "queue"})
    void failureAfterTheEntryWasCreatedLeavesNothingBlocking(String strategy) throws Exception {
        Path dir = Files.createDirectories(tempDir.resolve("locks"));
        String uri = "file:" + dir + "?strategy=" + strategy + "&lease=60s";
        if (strategy.equals("os")) {
            uri = "file:" + dir;
        }
        try (LockProvider failing = LockProvider.open(uri); LockProvider next = LockProvider.open(uri)) {
            failing.lock("other").tryAcquire().orElseThrow().close(); // makes the directory's counter
            Path counter;
            try (Stream<Path> files = Files.list(dir)) {
                counter = files.filter(p -> p.getFileName().toString().startsWith(DirectoryFence.PREFIX))
                        .findFirst().orElseThrow();
            }
            long value = Long.parseLong(counter.getFileName().toString().substring(DirectoryFence.PREFIX.length()));
            Path blocker = Files.createDirectory(dir.resolve(DirectoryFence.PREFIX + (value + 1)));

            LockBackendException e = assertThrows(LockBackendException.class, () -> failing.lock("board").tryAcquire());
            assertTrue(e.getMessage().contains("fencing"), e.getMessage());

            Files.delete(blocker);
            Optional<LockHandle> taken = next.lock("board").tryAcquire();
            assertTrue(taken.isPresent(), "the failed acquisition left its entry behind and blocks the lock");
            taken.get().close();
        }
    }
}
