package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher keys its class-data sharing archive cheaply; kanuki itself notices when the JVM
 * refused the archive and deletes the key, so that the launcher makes the archive again.
 */
class SharingArchiveCheckTest {
    @TempDir
    Path dir;

    @Test
    void aRefusedArchiveOlderThanAJarLosesItsKey() throws Exception {
        Path key = archiveWithKey(Instant.parse("2000-01-01T00:00:00Z"));
        assertEquals(0, version(key, "-Xshare:off").exitCode());
        assertFalse(Files.exists(key), "the key of an archive the JVM ran without is deleted");
    }

    @Test
    void anArchiveInUseKeepsItsKey() throws Exception {
        Path key = archiveWithKey(Instant.parse("2000-01-01T00:00:00Z"));
        // The JDK's own archive is in use here: the JVM runs with sharing.
        assertEquals(0, version(key, "-Xshare:auto").exitCode());
        assertTrue(Files.exists(key));
    }

    @Test
    void aRefusedArchiveMadeJustNowIsNotRemadeOnEveryRun() throws Exception {
        Path key = archiveWithKey(Instant.now().plusSeconds(60)); // newer than every jar and the JDK
        assertEquals(0, version(key, "-Xshare:off").exitCode());
        assertTrue(Files.exists(key), "an archive newer than all it was made from is kept for an hour");
    }

    private Path archiveWithKey(Instant archiveMade) throws Exception {
        Path archive = Files.writeString(dir.resolve("kanuki.jsa"), "not an archive");
        Files.setLastModifiedTime(archive, FileTime.from(archiveMade));
        assertTrue(System.getProperty("java.class.path").split(File.pathSeparator).length > 0);
        return Files.writeString(dir.resolve("kanuki.jsa.key"), "key");
    }

    private Cli.Result version(Path key, String share) throws Exception {
        return Cli.start(dir, List.of(share, "-D" + SharingArchiveCheck.KEY_FILE_PROPERTY + "=" + key), "--version")
                .await();
    }
}
