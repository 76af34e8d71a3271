package dev.kanuki.file;

import dev.kanuki.spi.SafeNames;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockLostException;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The os strategy in a hostile lock directory: planted links and directories, damaged records,
 * lock files removed under a holder, directories that cannot be used.
 */
class FileOsHostileEnvironmentTest {
    @TempDir
    Path tempDir;
    Path locks;
    LockProvider provider;

    @BeforeEach
    void open() {
        locks = tempDir.resolve("locks");
        provider = LockProvider.open("file:" + locks);
    }

    @AfterEach
    void close() {
        provider.close();
    }

    private Path lockFileOf(String name) {
        return locks.resolve(SafeNames.stem(name, "L") + ".lock");
    }

    @Test
    void plantedSymlinkIsNeitherFollowedNorDeleted() throws Exception {
        Path victim = tempDir.resolve("victim.txt");
        Files.writeString(victim, "precious");
        Path planted = lockFileOf("board");
        Files.createSymbolicLink(planted, victim);

        LockBackendException e = assertThrows(LockBackendException.class,
                () -> provider.lock("board").acquire(Duration.ofSeconds(1)));
        assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
        assertTrue(e.getMessage().contains(planted.toString()), "the message names the path: " + e.getMessage());
        assertEquals("precious", Files.readString(victim), "the link's target was written through");
        assertTrue(Files.isSymbolicLink(planted), "the planted link was removed");
    }

    @Test
    void plantedDirectoryIsReported() throws Exception {
        Files.createDirectories(lockFileOf("board"));
        LockBackendException e = assertThrows(LockBackendException.class,
                () -> provider.lock("board").tryAcquire());
        assertTrue(e.getMessage().contains("a directory"), e.getMessage());
        assertTrue(Files.isDirectory(lockFileOf("board")));
    }

    @Test
    void corruptedRecordIsRewrittenAndTokensStillIncrease() throws Exception {
        long before;
        try (LockHandle h = provider.lock("board").acquire(Duration.ofSeconds(1))) {
            before = h.fencingToken();
        }
        // The released lock's file (kept a moment for reuse) is damaged: it is reused and rewritten.
        Files.write(lockFileOf("board"), "garbage that is not a record, and long enough to fill it".repeat(5)
                .getBytes(StandardCharsets.UTF_8));
        LockStatus status = provider.status("board");
        assertEquals(LockStatus.State.FREE, status.state());
        assertTrue(status.owner().isEmpty(), "a damaged record must not produce an owner");
        try (LockHandle h = provider.lock("board").acquire(Duration.ofSeconds(1))) {
            assertTrue(h.fencingToken() > before, "token went from " + before + " to " + h.fencingToken()
                    + " after the record was damaged");
            assertEquals(OwnerRecord.SIZE + 4 + "board".length(), Files.size(lockFileOf("board")),
                    "the damaged tail was not trimmed");
            before = h.fencingToken();
        }
        try (LockHandle h = provider.lock("board").acquire(Duration.ofSeconds(1))) {
            assertTrue(h.fencingToken() > before, "tokens did not go on increasing");
        }
        // A released lock's file is kept a moment for reuse, then removed once unused.
        long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
        while (Files.exists(lockFileOf("board")) && System.nanoTime() < deadline) {
            Thread.sleep(50);
        }
        assertFalse(Files.exists(lockFileOf("board")), "a released lock left its file");
    }

    @Test
    void truncatedRecordIsTreatedAsDamaged() throws Exception {
        long before;
        try (LockHandle h = provider.lock("board").acquire(Duration.ofSeconds(1))) {
            before = h.fencingToken();
            assertTrue(before >= 1);
        }
        // The start of a record (its magic) cut short, planted where the released lock's file was.
        Files.write(lockFileOf("board"), java.util.Arrays.copyOf("KNKLOCK1".getBytes(StandardCharsets.US_ASCII), 40));
        try (LockHandle h = provider.lock("board").acquire(Duration.ofSeconds(1))) {
            assertTrue(h.fencingToken() > before, "fencing restarted from scratch after truncation");
        }
    }

    @Test
    void removedLockFileIsNoticedAsLost() throws Exception {
        LockHandle h = provider.lock("board").acquire(Duration.ofSeconds(1));
        Files.delete(lockFileOf("board"));
        assertThrows(LockLostException.class, h::verify, "a lock on a removed file protects nothing");
        assertFalse(h.isHeld());
        h.close();
        // The next holder gets the new file, and fencing restarts only because the record is gone.
        try (LockHandle again = provider.lock("board").acquire(Duration.ofSeconds(1))) {
            again.verify();
        }
    }

    @Test
    void watchdogCompletesLostWhenTheFileIsReplaced() throws Exception {
        LockHandle h = provider.lock("board").acquire(Duration.ofSeconds(1));
        Path file = lockFileOf("board");
        Files.delete(file);
        Files.writeString(file, "");
        LockLostException reason = h.lost().get(10, TimeUnit.SECONDS);
        assertTrue(reason.getMessage().contains("board"), reason.getMessage());
        assertFalse(h.isHeld());
        h.close();
    }

    @Test
    void lockDirectoryThatIsAFileIsReported() throws Exception {
        Path file = tempDir.resolve("plain-file");
        Files.writeString(file, "x");
        LockBackendException e = assertThrows(LockBackendException.class, () -> LockProvider.open("file:" + file));
        assertTrue(e.getMessage().contains(file.toString()) && e.getMessage().contains("not a directory"), e.getMessage());
        LockBackendException below = assertThrows(LockBackendException.class,
                () -> LockProvider.open("file:" + file.resolve("locks")));
        assertTrue(below.getMessage().contains(file.resolve("locks").toString()), below.getMessage());
    }

    @Test
    void unwritableLockDirectoryIsReported() throws Exception {
        Path dir = tempDir.resolve("readonly");
        Files.createDirectory(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("r-x------"));
        if (!"root".equals(System.getProperty("user.name"))) {
            LockBackendException e = assertThrows(LockBackendException.class, () -> LockProvider.open("file:" + dir));
            assertTrue(e.getMessage().contains("not writable"), e.getMessage());
            return;
        }
        // Root writes anywhere: check in a child JVM that runs as root without the capabilities
        // that override file permissions (as CI does).
        Path setpriv = Path.of("/usr/bin/setpriv");
        assumeTrue(Files.isExecutable(setpriv), "running as root and setpriv (util-linux) is missing");
        Process child = new ProcessBuilder(setpriv.toString(), "--bounding-set", "-dac_override,-dac_read_search",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), OpenLockDirectoryMain.class.getName(), "file:" + dir)
                .redirectErrorStream(true).start();
        String out = new String(child.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(child.waitFor(60, java.util.concurrent.TimeUnit.SECONDS));
        assertTrue(out.contains(LockBackendException.class.getName()) && out.contains("not writable"), out);
        try (var left = Files.list(dir)) {
            assertEquals(0, left.count(), "nothing may be created in the unwritable directory");
        }
    }

    @Test
    void lockDirectoryOnAReadOnlyFileSystemIsReported() {
        LockBackendException e = assertThrows(LockBackendException.class,
                () -> LockProvider.open("file:/proc/kanuki-cannot-exist"));
        assertTrue(e.getMessage().contains("/proc/kanuki-cannot-exist"), e.getMessage());
        assertFalse(e.hint().isEmpty(), "a backend error carries a hint");
    }

    @Test
    void createdLockDirectoryIsPrivate() throws Exception {
        Path dir = LockDirectory.prepare(tempDir.resolve("fresh/locks"), false);
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir, LinkOption.NOFOLLOW_LINKS)));
    }

    @Test
    void defaultDirectoryOpenToOthersIsRefused() throws Exception {
        Path dir = tempDir.resolve("shared");
        Files.createDirectory(dir);
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        LockBackendException e = assertThrows(LockBackendException.class, () -> LockDirectory.prepare(dir, true));
        assertTrue(e.getMessage().contains("writable by other users") && e.hint().contains("chmod 700"), e.getMessage());
    }

    @Test
    void unknownOptionsAndStrategiesAreRejected() {
        IllegalArgumentException strategy = assertThrows(IllegalArgumentException.class,
                () -> LockProvider.open("file:" + locks + "?strategy=carrier-pigeon"));
        assertTrue(strategy.getMessage().contains("carrier-pigeon") && strategy.getMessage().contains("os"));
        IllegalArgumentException option = assertThrows(IllegalArgumentException.class,
                () -> LockProvider.open("file:" + locks + "?stratgey=os"));
        assertTrue(option.getMessage().contains("stratgey"), option.getMessage());
    }
}
