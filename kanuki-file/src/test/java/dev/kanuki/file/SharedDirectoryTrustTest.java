package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.time.Duration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The lock directory trust rule ({@link DirectoryTrust}): a directory another user owns or may
 * write, or one reached through another user's symbolic link, is refused with an error that names
 * it and says what to do; one's own directories, root's, and a group directory opted into with
 * {@code shared=group} keep working. Files of another user are made with a real chown to
 * {@code nobody}, so these tests run as root (as CI does) and are skipped otherwise.
 */
class SharedDirectoryTrustTest {
    @TempDir
    Path tempDir;

    @BeforeEach
    void needsRoot() {
        assumeTrue("root".equals(System.getProperty("user.name")), "chown to another user needs root");
    }

    private static void chown(Path path, String user, String group) throws Exception {
        UserPrincipalLookupService users = path.getFileSystem().getUserPrincipalLookupService();
        PosixFileAttributeView view = Files.getFileAttributeView(path, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
        view.setOwner(users.lookupPrincipalByName(user));
        if (group != null) {
            view.setGroup(users.lookupPrincipalByGroupName(group));
        }
    }

    private static void chmod(Path path, String mode) throws Exception {
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(mode));
    }

    private static void sticky(Path path, int mode) throws Exception {
        // PosixFilePermission has no sticky bit: chmod(1) sets it.
        Process p = new ProcessBuilder("chmod", Integer.toOctalString(mode), path.toString()).inheritIO().start();
        assertTrue(p.waitFor() == 0, "chmod failed");
    }

    private static LockBackendException refused(String uri, String... words) {
        LockBackendException e = assertThrows(LockBackendException.class, () -> LockProvider.open(uri).close());
        for (String word : words) {
            assertTrue(e.getMessage().contains(word), "'" + word + "' missing from: " + e.getMessage());
        }
        assertFalse(e.hint().isEmpty(), "a refusal says what to do");
        return e;
    }

    private static void works(String uri) {
        try (LockProvider provider = LockProvider.open(uri);
             LockHandle h = provider.lock("trust").acquire(Duration.ofSeconds(30))) {
            assertTrue(h.isHeld());
        }
    }

    @Test
    void worldWritableDirectoryOfAnotherUserIsRefused() throws Exception {
        Path dir = Files.createDirectory(tempDir.resolve("app-locks"));
        chmod(dir, "rwxrwxrwx");
        chown(dir, "nobody", null);
        refused("file:" + dir, dir.toString(), "writable by every user");
        refused("file:" + dir + "?strategy=mkdir", dir.toString(), "writable by every user");
        refused("file:" + dir + "?shared=group", dir.toString(), "writable by every user");
    }

    @Test
    void directoryOfAnotherUserIsRefusedEvenClosedToOthers() throws Exception {
        Path dir = Files.createDirectory(tempDir.resolve("theirs"));
        chmod(dir, "rwxr-xr-x");
        chown(dir, "nobody", null);
        LockBackendException e = refused("file:" + dir, dir.toString(), "belongs to nobody");
        assertTrue(e.hint().contains("shared=group"), e.hint());
    }

    @Test
    void worldWritableStickyDirectoryIsRefused() throws Exception {
        // The sticky bit keeps others from removing kanuki's files, not from planting them first.
        Path dir = Files.createDirectory(tempDir.resolve("tmp-like"));
        sticky(dir, 01777);
        refused("file:" + dir, dir.toString(), "writable by every user");
    }

    @Test
    void groupWritableDirectoryNeedsSharedGroup() throws Exception {
        Path dir = Files.createDirectory(tempDir.resolve("team"));
        chmod(dir, "rwxrwx---");
        chown(dir, "nobody", "nogroup");
        refused("file:" + dir, dir.toString());
        Path mine = Files.createDirectory(tempDir.resolve("team-of-root"));
        chmod(mine, "rwxrwx---");
        chown(mine, "root", "nogroup");
        refused("file:" + mine, mine.toString(), "writable by group nogroup");
        works("file:" + dir + "?shared=group");
        works("file:" + mine + "?shared=group&strategy=mkdir");
    }

    @Test
    void ownDirectoriesKeepWorking() throws Exception {
        works("file:" + tempDir.resolve("made/by/kanuki"));
        Path open = Files.createDirectory(tempDir.resolve("readable"));
        chmod(open, "rwxr-xr-x");
        works("file:" + open);
        Path privateGroup = Files.createDirectory(tempDir.resolve("umask002"));
        chmod(privateGroup, "rwxrwxr-x"); // group root, named like its owner: a user-private group
        works("file:" + privateGroup);
        Path link = Files.createSymbolicLink(tempDir.resolve("my-link"), open);
        works("file:" + link);
    }

    @Test
    void symbolicLinkOfAnotherUserIsNotFollowed() throws Exception {
        Path real = Files.createDirectory(tempDir.resolve("real"));
        Path link = Files.createSymbolicLink(tempDir.resolve("planted"), real);
        chown(link, "nobody", null);
        refused("file:" + link, link.toString(), "symbolic link", "nobody");
        refused("file:" + link.resolve("below"), link.toString(), "symbolic link");
        assertFalse(Files.exists(real.resolve("below")), "nothing may be created through the planted link");
    }

    /**
     * Runs {@link OpenLockDirectoryMain} as user nobody (allowed to read everything, as the build's
     * class path is under root's home, but to write only what nobody may write).
     */
    private static String openAsNobody(String uri) throws Exception {
        Path setpriv = Path.of("/usr/bin/setpriv");
        assumeTrue(Files.isExecutable(setpriv), "setpriv (util-linux) is missing");
        Process child = new ProcessBuilder(setpriv.toString(), "--reuid=65534", "--regid=65534", "--clear-groups",
                "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"), OpenLockDirectoryMain.class.getName(), uri)
                .redirectErrorStream(true).start();
        String out = new String(child.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertTrue(child.waitFor(60, java.util.concurrent.TimeUnit.SECONDS), "the child did not end");
        return out;
    }

    @Test
    void anOrdinaryUserKeepsItsOwnDirectoriesAndIsRefusedOthers() throws Exception {
        chmod(tempDir, "rwxr-xr-x"); // access(2), behind Files.isWritable, checks the path without capabilities
        Path home = Files.createDirectory(tempDir.resolve("home-of-nobody"));
        chown(home, "nobody", "nogroup");
        String own = openAsNobody("file:" + home);
        assertTrue(own.contains("OK"), own);
        String created = openAsNobody("file:" + home.resolve("made/by/kanuki"));
        assertTrue(created.contains("OK"), created);
        Path open = Files.createDirectory(tempDir.resolve("open-of-root"));
        chmod(open, "rwxrwxrwx");
        String refusedOpen = openAsNobody("file:" + open);
        assertTrue(refusedOpen.contains(LockBackendException.class.getName()) && refusedOpen.contains("writable by every user"),
                refusedOpen);
        Path link = Files.createSymbolicLink(home.resolve("link"), home.resolve("made"));
        chown(link, "root", null);
        String rootsLink = openAsNobody("file:" + link);
        assertTrue(rootsLink.contains("OK"), "a link of root is followed: " + rootsLink);
        Path theirs = Files.createDirectory(tempDir.resolve("theirs"));
        Files.getFileAttributeView(theirs, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .setOwner(tempDir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("daemon"));
        chmod(theirs, "rwxrwxrwx");
        String refusedTheirs = openAsNobody("file:" + theirs + "?shared=group");
        assertTrue(refusedTheirs.contains("writable by every user"), refusedTheirs);
        chmod(theirs, "rwxrwx---");
        chown(theirs, "daemon", "nogroup");
        String team = openAsNobody("file:" + theirs + "?shared=group");
        assertTrue(team.contains("OK"), "a group directory with shared=group: " + team);
        String teamWithoutOptIn = openAsNobody("file:" + theirs);
        assertTrue(teamWithoutOptIn.contains("belongs to daemon"), teamWithoutOptIn);
    }

    @Test
    void linkOfAnotherUserInsideALinksTargetIsNotFollowed() throws Exception {
        // Root's link leads through a link of another user, who can point it at any directory.
        Path real = Files.createDirectory(tempDir.resolve("real"));
        Path theirs = Files.createSymbolicLink(tempDir.resolve("theirs"), real);
        chown(theirs, "nobody", null);
        Path rootsLink = Files.createSymbolicLink(tempDir.resolve("roots"), tempDir.resolve("theirs"));
        refused("file:" + rootsLink, theirs.toString(), "symbolic link", "nobody");
        Path relative = Files.createSymbolicLink(tempDir.resolve("relative"), Path.of("theirs"));
        refused("file:" + relative, theirs.toString(), "nobody");
    }

    @Test
    void directoryInsideAnotherUsersDirectoryIsRefused() throws Exception {
        Path theirs = Files.createDirectory(tempDir.resolve("theirs"));
        chmod(theirs, "rwxr-xr-x");
        Path locks = Files.createDirectory(theirs.resolve("locks"));
        chown(theirs, "nobody", null);
        refused("file:" + locks, theirs.toString(), "belongs to nobody");
        Path open = Files.createDirectory(tempDir.resolve("open"));
        chmod(open, "rwxrwxrwx");
        refused("file:" + Files.createDirectory(open.resolve("locks")), open.toString(), "without the sticky bit");
    }
}
