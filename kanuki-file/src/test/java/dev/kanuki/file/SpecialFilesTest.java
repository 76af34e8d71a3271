package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockProvider;
import dev.kanuki.spi.SafeNames;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A FIFO, a socket or a directory planted where a lock artefact belongs (or a file where a
 * directory belongs) is refused at once with an error naming the path and what was found; no
 * acquisition blocks on it, with or without a wait.
 */
class SpecialFilesTest {
    @TempDir
    Path tempDir;

    /** Strategy, artefact (relative to the lock directory; STEM stands for the name's stem), what to plant. */
    static List<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        String[][] artefacts = {
            {"os", "STEM.lock"},
            {"mkdir", "STEM.lockdir/owner"},
            {"symlink", "STEM.lnk"},
            {"rename", "STEM.free"},
            {"rename", "STEM.held"},
            {"create", "STEM.lck"},
            {"queue", "STEM.queue"},
        };
        for (String[] a : artefacts) {
            for (String kind : List.of("fifo", "socket", "directory")) {
                cases.add(Arguments.of(a[0], a[1], kind));
            }
        }
        cases.add(Arguments.of("mkdir", "STEM.lockdir", "fifo"));
        cases.add(Arguments.of("mkdir", "STEM.lockdir", "socket"));
        cases.add(Arguments.of("mkdir", "STEM.lockdir", "file"));
        return cases;
    }

    @ParameterizedTest(name = "{0}: {2} at {1}")
    @MethodSource("cases")
    void specialFileIsRefusedAtOnce(String strategy, String artefact, String kind) throws Exception {
        Path dir = Files.createDirectories(tempDir.resolve("locks"));
        Path planted = dir.resolve(artefact.replace("STEM", SafeNames.stem("board", "L")));
        Files.createDirectories(planted.getParent());
        plant(planted, kind);
        String what = switch (kind) {
            case "fifo" -> "FIFO";
            case "socket" -> "socket";
            case "directory" -> "directory";
            default -> "regular file";
        };
        try (LockProvider provider = LockProvider.open("file:" + dir + "?strategy=" + strategy)) {
            assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
                LockBackendException e = assertThrows(LockBackendException.class,
                        () -> provider.lock("board").tryAcquire());
                assertTrue(e.getMessage().contains(what), e.getMessage());
                assertTrue(e.getMessage().contains(SafeNames.stem("board", "L")), "names the path: " + e.getMessage());
                assertThrows(LockBackendException.class, () -> provider.lock("board").acquire(Duration.ofSeconds(3)));
            });
        }
        assertTrue(Files.exists(planted, LinkOption.NOFOLLOW_LINKS), "the planted entry was removed");
    }

    static void plant(Path path, String kind) throws Exception {
        switch (kind) {
            case "fifo" -> {
                Process p = new ProcessBuilder("mkfifo", path.toString()).inheritIO().start();
                assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, "mkfifo failed");
            }
            case "socket" -> {
                // Bound at a short path (sun_path is ~108 bytes), then renamed into place.
                Path shortPath = Files.createTempDirectory(Path.of("/tmp"), "ks").resolve("s");
                try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
                    server.bind(UnixDomainSocketAddress.of(shortPath));
                    Files.move(shortPath, path);
                }
                Files.delete(shortPath.getParent());
            }
            case "directory" -> Files.createDirectory(path);
            case "file" -> Files.writeString(path, "not a directory");
            default -> throw new IllegalArgumentException(kind);
        }
    }
}
