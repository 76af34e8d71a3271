package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kanuki.cli.board.BoardServer;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kanuki demo board --data FILE} where another user planted something in place of a data
 * file: a symbolic link or a hard link to a victim file, a FIFO, a file of another user. The board
 * refuses at startup, or at the request when it was planted later, and never appends the text
 * visitors send to the victim.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BoardHostileFilesTest {
    @TempDir
    Path dir;
    Path data;
    Path submitted;
    Path victim;

    @BeforeEach
    void files() throws IOException {
        data = dir.resolve("board.txt");
        submitted = dir.resolve("board.txt.submitted");
        victim = dir.resolve("victim");
        Files.writeString(victim, "victim's own line\n");
    }

    private String locks() {
        return "file:" + dir.resolve("locks");
    }

    private void assertRefusedAtStart(String lock, Path planted, String found) {
        IOException e = assertThrows(IOException.class, () -> BoardServer.start(0, lock, data).close());
        assertTrue(e.getMessage().contains(planted.toString()) && e.getMessage().contains(found), e.getMessage());
    }

    private void assertVictimUntouched() throws IOException {
        assertEquals("victim's own line\n", Files.readString(victim));
    }

    @Test
    void plantedSubmittedLogSymlinkIsRefusedAtStartup() throws Exception {
        Files.createSymbolicLink(submitted, victim);
        assertRefusedAtStart(locks(), submitted, "symbolic link");
        assertRefusedAtStart(null, submitted, "symbolic link");
        assertVictimUntouched();
    }

    @Test
    void submittedLogSymlinkPlantedWhileRunningIsRefusedPerRequest() throws Exception {
        try (BoardServer board = BoardServer.start(0, locks(), data)) {
            Files.createSymbolicLink(submitted, victim);
            HttpResponse<String> r = BoardClient.post(board.url(), "token-1", "text chosen over HTTP").get(60, TimeUnit.SECONDS);
            assertNotEquals(303, r.statusCode(), "the post was accepted through a planted link");
        }
        assertVictimUntouched();
    }

    @Test
    void submittedLogHardLinkIsRefused() throws Exception {
        Files.createLink(submitted, victim);
        assertRefusedAtStart(locks(), submitted, "2 hard links");
        assertVictimUntouched();
    }

    @Test
    void submittedLogFifoIsRefused() throws Exception {
        Process mkfifo = new ProcessBuilder("mkfifo", submitted.toString()).inheritIO().start();
        assumeTrue(mkfifo.waitFor() == 0, "mkfifo is missing");
        assertRefusedAtStart(locks(), submitted, "not a regular file");
    }

    @Test
    void dataFileSymlinkIsNotReadWithoutALock() throws Exception {
        Files.createSymbolicLink(data, victim);
        assertRefusedAtStart(null, data, "symbolic link");
        assertRefusedAtStart(locks(), data, "symbolic link");
        assertTrue(Files.isSymbolicLink(data));
        assertVictimUntouched();
    }

    @Test
    void submittedLogOfAnotherUserIsRefused() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "chown to another user needs root");
        Files.writeString(submitted, "");
        Files.getFileAttributeView(submitted, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                .setOwner(dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody"));
        assertRefusedAtStart(locks(), submitted, "a file of user nobody");
    }
}
