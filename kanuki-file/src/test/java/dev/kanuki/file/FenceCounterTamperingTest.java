package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.SafeNames;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A fencing counter or record moved by something else (any user who can write the directory):
 * an error naming the file, never a token that wraps to a negative one, repeats or goes back.
 */
class FenceCounterTamperingTest {
    @TempDir
    Path tempDir;

    private static Path counterOf(Path dir) throws Exception {
        try (Stream<Path> entries = Files.list(dir)) {
            return entries.filter(p -> p.getFileName().toString().startsWith(DirectoryFence.PREFIX)).findFirst().orElseThrow();
        }
    }

    private static long valueOf(Path counter) {
        return Long.parseLong(counter.getFileName().toString().substring(DirectoryFence.PREFIX.length()));
    }

    /** Takes tokens until one fails; returns those given (at most {@code max}). */
    private static List<Long> tokens(LockProvider provider, int max, List<LockBackendException> failures) {
        List<Long> given = new ArrayList<>();
        for (int i = 0; i < max; i++) {
            try (LockHandle h = provider.lock("fenced-" + i).acquire(Duration.ofSeconds(30))) {
                given.add(h.fencingToken());
            } catch (LockBackendException e) {
                failures.add(e);
                break;
            }
        }
        return given;
    }

    @ParameterizedTest
    @ValueSource(strings = {"os", "mkdir", "queue"})
    void counterMovedNearLongMaxIsRefusedNotWrapped(String strategy) throws Exception {
        Path dir = tempDir.resolve("locks");
        try (LockProvider provider = LockProvider.open("file:" + dir + "?strategy=" + strategy)) {
            List<LockBackendException> failures = new ArrayList<>();
            long first = tokens(provider, 1, failures).get(0);
            Path counter = counterOf(dir);
            Path moved = dir.resolve(DirectoryFence.PREFIX + (Long.MAX_VALUE - 1));
            Files.move(counter, moved, StandardCopyOption.ATOMIC_MOVE);
            List<Long> given = tokens(provider, 3, failures);
            for (long token : given) {
                assertTrue(token > first && token <= DirectoryFence.MAX_TOKEN, "token " + token + " after " + first);
            }
            assertTrue(!failures.isEmpty(), "tokens went on from a planted counter: " + given);
            String message = failures.get(0).getMessage();
            assertTrue(message.contains(moved.toString()) && message.contains("moved by something else"), message);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"os", "mkdir"})
    void counterMovedBackIsRefused(String strategy) throws Exception {
        Path dir = tempDir.resolve("locks");
        try (LockProvider provider = LockProvider.open("file:" + dir + "?strategy=" + strategy)) {
            List<LockBackendException> failures = new ArrayList<>();
            long first = tokens(provider, 1, failures).get(0);
            Path counter = counterOf(dir);
            Files.move(counter, dir.resolve(DirectoryFence.PREFIX + (valueOf(counter) - 1000)), StandardCopyOption.ATOMIC_MOVE);
            List<Long> given = tokens(provider, 3, failures);
            for (long token : given) {
                assertTrue(token > first, "token " + token + " is not above " + first + ": the counter was moved back");
            }
            assertTrue(!failures.isEmpty() && failures.get(0).getMessage().contains("went back"),
                    "a counter moved back was used: " + given + " " + failures);
        }
    }

    @Test
    void recordNearLongMaxIsRefusedNotWrapped() throws Exception {
        Path dir = tempDir.resolve("locks");
        try (LockProvider provider = LockProvider.open("file:" + dir)) {
            // A lock file whose record (valid checksum: anyone can compute it) says Long.MAX_VALUE.
            byte[] name = "board".getBytes(StandardCharsets.UTF_8);
            ByteBuffer record = OwnerRecord.buffer(name.length);
            OwnerRecord.encode(record, Long.MAX_VALUE, new OwnerInfo("elsewhere", 1, "planted", Instant.now(), null), -1, name);
            Path file = dir.resolve(SafeNames.stem("board", "L") + ".lock");
            Files.write(file, bytesOf(record));
            LockBackendException e = assertThrows(LockBackendException.class, () -> {
                try (LockHandle h = provider.lock("board").acquire(Duration.ofSeconds(30))) {
                    throw new AssertionError("acquired with token " + h.fencingToken() + " from a record at Long.MAX_VALUE");
                }
            });
            assertTrue(e.getMessage().contains(file.toString()) && e.getMessage().contains(String.valueOf(Long.MAX_VALUE)),
                    e.getMessage());
        }
    }

    private static byte[] bytesOf(ByteBuffer buffer) {
        byte[] out = new byte[buffer.remaining()];
        buffer.duplicate().get(out);
        return out;
    }
}
