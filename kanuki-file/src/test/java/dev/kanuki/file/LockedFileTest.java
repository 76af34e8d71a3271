package dev.kanuki.file;

import dev.kanuki.spi.SafeNames;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockLostException;
import dev.kanuki.LockProvider;
import dev.kanuki.LockedFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link LockedFile} on the os strategy: what happens when an update cannot be committed. */
class LockedFileTest {
    @TempDir
    Path tempDir;
    LockProvider provider;
    Path board;
    LockedFile file;

    @BeforeEach
    void open() throws Exception {
        provider = LockProvider.open("file:" + tempDir.resolve("locks"));
        board = tempDir.resolve("data/board.txt");
        Files.createDirectories(board.getParent());
        Files.writeString(board, "first post\n");
        file = LockedFile.of(provider.lock("board"), board);
    }

    @AfterEach
    void close() {
        provider.close();
    }

    @Test
    void aHolderThatLostItsLockWritesNothing() throws Exception {
        Path lockFile = tempDir.resolve("locks").resolve(SafeNames.stem("board", "L") + ".lock");
        assertThrows(LockLostException.class, () -> file.updateText(Duration.ofSeconds(1), text -> {
            try {
                Files.delete(lockFile); // someone breaks the lock while we work
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
            return text + "late post\n";
        }));
        assertEquals("first post\n", Files.readString(board), "a holder without the lock overwrote the file");
        assertNoTemporaryFiles();
    }

    @Test
    void aFailingTransformLeavesTheFileAndReleasesTheLock() throws Exception {
        assertThrows(IllegalStateException.class, () -> file.updateText(Duration.ofSeconds(1), text -> {
            throw new IllegalStateException("bad post");
        }));
        assertEquals("first post\n", Files.readString(board));
        assertTrue(provider.lock("board").tryAcquire().map(h -> {
            h.close();
            return true;
        }).orElse(false), "the lock was not released after a failed update");
    }

    @Test
    void anUpdateKeepsPermissionsAndLeavesNoTemporaryFile() throws Exception {
        Files.setPosixFilePermissions(board, PosixFilePermissions.fromString("rw-r-----"));
        assertEquals("first post\nsecond\n", file.updateText(Duration.ofSeconds(1), text -> text + "second\n"));
        assertEquals("rw-r-----", PosixFilePermissions.toString(Files.getPosixFilePermissions(board)));
        assertNoTemporaryFiles();
    }

    @Test
    void returningTheInputWritesNothing() throws Exception {
        long modified = Files.getLastModifiedTime(board).toMillis();
        Thread.sleep(20);
        file.update(Duration.ofSeconds(1), bytes -> bytes);
        assertEquals(modified, Files.getLastModifiedTime(board).toMillis());
    }

    private void assertNoTemporaryFiles() throws Exception {
        try (Stream<Path> list = Files.list(board.getParent())) {
            // the file, and the directory of its versions once it was written through LockedFile
            assertEquals(1, list.filter(p -> !p.getFileName().toString().equals(".board.txt.kanuki")).count(),
                    "a temporary file was left behind");
        }
        Path versions = board.resolveSibling(".board.txt.kanuki");
        if (Files.isDirectory(versions)) {
            try (Stream<Path> list = Files.list(versions)) {
                assertEquals(0, list.filter(p -> p.getFileName().toString().startsWith(".tmp-")).count(),
                        "a temporary version was left behind");
            }
        }
    }
}
