package dev.kanuki;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kanuki.LockedFileFencingTest.Store;
import dev.kanuki.LockedFileFencingTest.StoreBackend;
import dev.kanuki.spi.BackendProviders;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@link LockedFile} beside which another user planted its {@code .NAME.kanuki} version
 * directory, a version, a link or a plain file that is a link: refused with an error naming what
 * and how to fix it, never content replaced silently, never updates refused forever without a
 * reason. Another user's files are made with a real chown to {@code nobody} (the tests that need
 * it run as root, as CI does).
 */
class LockedFileForeignVersionsTest {
    private static final String FIRST_SLOT = "after-" + "0".repeat(19);

    @TempDir
    Path dir;
    Path board;
    Path versions;
    LockProvider provider;
    LockedFile locked;

    @BeforeEach
    void open() throws Exception {
        board = dir.resolve("board.txt");
        versions = dir.resolve(".board.txt.kanuki");
        Files.writeString(board, "v0\n");
        provider = BackendProviders.open("store:a", new StoreBackend(new Store(), "store:a"));
        locked = LockedFile.of(provider.lock("board"), board);
    }

    @AfterEach
    void close() {
        provider.close();
    }

    private static void chownNobody(Path path) throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "chown to another user needs root");
        Files.getFileAttributeView(path, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .setOwner(path.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
    }

    /** A version directory with one version of a very high token, as another user would plant it. */
    private Path plant(Path where) throws Exception {
        Files.createDirectory(where);
        Files.setPosixFilePermissions(where, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path version = where.resolve(FIRST_SLOT);
        Files.writeString(version, "kanuki-version 9000000000000000000\nplanted\n");
        return version;
    }

    private String read() {
        return locked.read(Duration.ofSeconds(10), b -> new String(b, StandardCharsets.UTF_8));
    }

    private void assertRefused(String... words) {
        for (Runnable call : new Runnable[] {this::read,
                () -> locked.updateText(Duration.ofSeconds(10), text -> text + "mine\n")}) {
            LockBackendException e = assertThrows(LockBackendException.class, call::run);
            for (String word : words) {
                assertTrue(e.getMessage().contains(word), "'" + word + "' missing from: " + e.getMessage());
            }
            assertTrue(e.hint().contains(versions.toString()), "the hint names the directory to remove: " + e.hint());
        }
    }

    @Test
    void versionDirectoryOfAnotherUserIsRefused() throws Exception {
        Path version = plant(versions);
        chownNobody(version);
        chownNobody(versions);
        assertRefused(versions.toString(), "belongs to nobody");
        assertEquals("v0\n", Files.readString(board), "the plain file is unchanged");
    }

    @Test
    void versionDirectoryOthersCanWriteIsRefused() throws Exception {
        plant(versions);
        Files.setPosixFilePermissions(versions, PosixFilePermissions.fromString("rwxrwxrwx"));
        assertRefused(versions.toString(), "writable by other users");
    }

    @Test
    void versionOfAnotherUserInsideOwnDirectoryIsRefused() throws Exception {
        Path version = plant(versions);
        chownNobody(version);
        assertRefused(version.toString(), "belongs to nobody");
    }

    @Test
    void versionDirectoryReplacedByALinkIsNotFollowed() throws Exception {
        Path elsewhere = dir.resolve("elsewhere");
        plant(elsewhere);
        Files.createSymbolicLink(versions, elsewhere);
        assertRefused(versions.toString(), "not a directory");
        try (var entries = Files.list(elsewhere)) {
            assertEquals(1, entries.count(), "nothing was written through the link");
        }
    }

    @Test
    void plainFileThatIsALinkIsNotReadThrough() throws Exception {
        Path secret = dir.resolve("secret");
        Files.writeString(secret, "another user's secret\n");
        Files.delete(board);
        Files.createSymbolicLink(board, secret);
        LockBackendException e = assertThrows(LockBackendException.class, this::read);
        assertTrue(e.getMessage().contains(board.toString()) && e.getMessage().contains("not a regular file"), e.getMessage());
        assertThrows(LockBackendException.class, () -> locked.updateText(Duration.ofSeconds(10), text -> text + "mine\n"));
        assertTrue(Files.isSymbolicLink(board), "the link was left for its owner to inspect");
        assertEquals("another user's secret\n", Files.readString(secret));
    }

    @Test
    void ownVersionsKeepWorkingAndArePrivate() throws Exception {
        assertEquals("v0\nmine\n", locked.updateText(Duration.ofSeconds(10), text -> text + "mine\n"));
        assertEquals("v0\nmine\n", read());
        assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(versions)));
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(versions.resolve(FIRST_SLOT))));
    }
}
