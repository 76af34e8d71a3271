package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.ParkedItem;
import dev.kanuki.contract.WorkSpoolContract;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The spool directory ({@code Spools.directory}) passes the spool contract, with {@code file:}
 * locks between the processes; and it never follows, reads or removes what is not its own.
 */
class DirectorySpoolContractTest extends WorkSpoolContract {
    @Override
    protected String uri(Path tempDir) {
        return "file:" + tempDir.resolve("locks");
    }

    @Override
    protected String spoolSpec(Path tempDir) {
        return "dir:" + tempDir.resolve("spool");
    }

    private Path nameDir() throws Exception {
        try (Stream<Path> list = Files.list(tempDir.resolve("spool"))) {
            return list.filter(Files::isDirectory).findFirst().orElseThrow();
        }
    }

    @Test
    void foreignEntriesAreLeftAlone() throws Exception {
        String id = String.format("%016x-%s", 5_000_000L, "555r0e");
        spool.park(name, new ParkedItem(id, "555r0e", "mine".getBytes(StandardCharsets.UTF_8), 0));
        Path parked = nameDir().resolve("parked");
        Path victim = Files.writeString(tempDir.resolve("victim"), "do not touch");
        // A link with an item's name, a FIFO-like foreign file and a directory: none is kanuki's.
        Path link = Files.createSymbolicLink(parked.resolve(String.format("%016x-%s.0", 4_000_000L, "666r0f")), victim);
        Path foreign = Files.writeString(parked.resolve("notes.txt"), "foreign");
        Path dir = Files.createDirectory(parked.resolve(String.format("%016x-%s.0", 4_000_001L, "666r0f")));
        List<ParkedItem> claimed = spool.claim(name, 7, 10);
        assertEquals(List.of(id), claimed.stream().map(ParkedItem::id).toList());
        assertTrue(spool.complete(name, claimed.get(0), 7));
        assertTrue(spool.isEmpty(name));
        assertTrue(Files.isSymbolicLink(link));
        assertTrue(Files.exists(foreign));
        assertTrue(Files.isDirectory(dir));
        assertEquals("do not touch", Files.readString(victim));
    }

    @Test
    void aPlantedLinkInPlaceOfASpoolDirectoryIsRefused() throws Exception {
        String id = String.format("%016x-%s", 6_000_000L, "777r10");
        spool.park(name, new ParkedItem(id, "777r10", "x".getBytes(StandardCharsets.UTF_8), 0));
        Path claimedDir = nameDir().resolve("claimed");
        Files.createDirectories(claimedDir);
        Path elsewhere = Files.createDirectory(tempDir.resolve("elsewhere"));
        Files.delete(claimedDir);
        Files.createSymbolicLink(claimedDir, elsewhere);
        LockBackendException refused = assertThrows(LockBackendException.class, () -> spool.claim(name, 8, 10));
        assertTrue(refused.getMessage().contains("symbolic link"), refused.getMessage());
        try (Stream<Path> list = Files.list(elsewhere)) {
            assertEquals(0, list.count(), "wrote through the link");
        }
    }
}
