package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.spi.ProcessIdentity;
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
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A character device, FIFO, socket or directory planted where a lock artefact belongs (or a file
 * where a directory belongs, or content where an empty marker belongs) is refused at once with an
 * error naming the path and what was found; no acquisition blocks past its deadline, with or
 * without a wait; and the planted entry is never deleted or changed (same inode, same type).
 *
 * <p>Every artefact of every strategy: the entry, {@code mkdir}'s owner file, {@code rename}'s
 * token names and marker {@code STEM.init}, the breaker {@code STEM.breaker} (planted next to a
 * stale entry, so the acquisition must take the breaker to break it), and the fencing counter
 * {@code kanuki-fence.N} and its marker {@code kanuki-fence}.
 */
class SpecialFilesTest {
    private static final List<String> TTL = List.of("mkdir", "symlink", "rename", "create");
    private static final Map<String, String> ENTRY = Map.of("mkdir", "STEM.lockdir", "symlink", "STEM.lnk",
            "rename", "STEM.held", "create", "STEM.lck", "queue", "STEM.queue", "os", "STEM.lock");

    @TempDir
    Path tempDir;

    /** Strategy, artefact (relative to the lock directory; STEM stands for the name's stem), what to plant. */
    static List<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        List<String[]> artefacts = new ArrayList<>(List.of(
            new String[] {"mkdir", "STEM.lockdir/owner"},
            new String[] {"rename", "STEM.free"},
            new String[] {"rename", "STEM.init"}));
        for (String strategy : List.of("os", "mkdir", "symlink", "rename", "create", "queue")) {
            if (!strategy.equals("mkdir")) {
                artefacts.add(new String[] {strategy, ENTRY.get(strategy)});
            }
            artefacts.add(new String[] {strategy, "kanuki-fence"});
            artefacts.add(new String[] {strategy, "COUNTER"});
            if (TTL.contains(strategy)) {
                artefacts.add(new String[] {strategy, "STEM.breaker"});
            }
        }
        for (String[] a : artefacts) {
            for (String kind : List.of("chardev", "fifo", "socket", "directory")) {
                cases.add(Arguments.of(a[0], a[1], kind));
            }
        }
        for (String kind : List.of("chardev", "fifo", "socket", "file")) {
            cases.add(Arguments.of("mkdir", "STEM.lockdir", kind));
        }
        cases.add(Arguments.of("rename", "STEM.init", "file"));
        return cases;
    }

    @ParameterizedTest(name = "{0}: {2} at {1}")
    @MethodSource("cases")
    void specialFileIsRefusedAtOnce(String strategy, String artefact, String kind) throws Exception {
        Assumptions.assumeTrue(!kind.equals("chardev") || isRoot(),
                "making a character device (mknod c 1 3) needs root");
        Path dir = Files.createDirectories(tempDir.resolve("locks"));
        String stem = SafeNames.stem("board", "L");
        try (LockProvider provider = LockProvider.open("file:" + dir + "?strategy=" + strategy)) {
            Path planted;
            if (artefact.equals("COUNTER")) {
                planted = removeCounter(provider, dir); // swapped for something else
            } else {
                planted = dir.resolve(artefact.replace("STEM", stem));
                Files.createDirectories(planted.getParent());
            }
            if (artefact.endsWith(".breaker")) {
                plantStaleEntry(strategy, dir, stem); // so that taking the lock needs the breaker
            }
            plant(planted, kind);
            Object identity = identity(planted);
            assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
                Optional<LockBackendException> refused = attempt(() -> provider.lock("board").tryAcquire());
                Optional<LockBackendException> refusedWithWait =
                        attempt(() -> Optional.of(provider.lock("board").acquire(Duration.ofSeconds(2))));
                if (mustRefuse(artefact)) {
                    assertTrue(refused.isPresent(), "tryAcquire was not refused");
                    assertTrue(refusedWithWait.isPresent(), "acquire(2s) was not refused");
                    String message = refused.get().getMessage();
                    assertTrue(message.contains(described(kind)), message);
                    assertTrue(message.contains(planted.getFileName().toString()), "names the path: " + message);
                }
                // The fencing counter's files are only renamed or created by name, never opened: a
                // foreign one is passed by (kanuki-fence.N: the counter is made again above it).
            });
            if (artefact.equals("COUNTER")) {
                // The counter is moved by renaming it, never opened: a foreign file swapped in for it
                // may be moved on like the counter, but stays in the directory, the same file.
                try (Stream<Path> files = Files.list(dir)) {
                    List<Object> fences = new ArrayList<>();
                    for (Path p : files.filter(p -> p.getFileName().toString().startsWith(DirectoryFence.PREFIX)).toList()) {
                        fences.add(identity(p));
                    }
                    assertTrue(fences.contains(identity), "the planted " + kind + " in place of the counter was removed");
                }
            } else {
                assertEquals(identity, identity(planted), "the planted " + kind + " at " + artefact + " was removed or replaced");
            }
        }
    }

    /** Makes the directory's fencing counter {@code kanuki-fence.N}, removes it and returns its path. */
    static Path removeCounter(LockProvider provider, Path dir) throws Exception {
        provider.lock("other").tryAcquire().orElseThrow().close();
        Path counter;
        try (Stream<Path> files = Files.list(dir)) {
            counter = files.filter(p -> p.getFileName().toString().startsWith(DirectoryFence.PREFIX)).findFirst().orElseThrow();
        }
        Files.delete(counter);
        return counter;
    }

    private static boolean mustRefuse(String artefact) {
        return !artefact.equals("COUNTER") && !artefact.equals("kanuki-fence");
    }

    /** One call; a lock it returns is released at once; a refusal is returned. */
    private static Optional<LockBackendException> attempt(ThrowingCall call) throws Exception {
        try {
            call.run().ifPresent(LockHandle::close);
            return Optional.empty();
        } catch (LockBackendException e) {
            return Optional.of(e);
        }
    }

    private interface ThrowingCall {
        Optional<LockHandle> run() throws Exception;
    }

    private static String described(String kind) {
        return switch (kind) {
            case "chardev" -> "character device";
            case "fifo" -> "FIFO";
            case "socket" -> "socket";
            case "directory" -> "directory";
            default -> "regular file";
        };
    }

    /** @return the planted entry's inode and type (a replacement or removal changes it) */
    private static Object identity(Path path) throws Exception {
        return List.of(String.valueOf(Files.getAttribute(path, "unix:ino", LinkOption.NOFOLLOW_LINKS)),
                String.valueOf(Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS)),
                String.valueOf(Files.getAttribute(path, "unix:size", LinkOption.NOFOLLOW_LINKS)));
    }

    /** An entry whose lease ran out a while ago: the next acquirer must break it (under the breaker). */
    private static void plantStaleEntry(String strategy, Path dir, String stem) throws Exception {
        EntryStrategy s = switch (strategy) {
            case "mkdir" -> new MkdirStrategy();
            case "symlink" -> new SymlinkStrategy();
            case "rename" -> new RenameStrategy();
            default -> new CreateStrategy();
        };
        long past = System.currentTimeMillis() - 60_000;
        TtlRecord stale = new TtlRecord(ProcessIdentity.randomId(), ProcessIdentity.pid(), past - 1000, past,
                ProcessIdentity.host(), "board");
        assertTrue(s.tryCreate(s.entry(dir, stem), stale));
    }

    private static boolean isRoot() throws Exception {
        return "0".equals(String.valueOf(Files.getAttribute(Path.of("/proc/self"), "unix:uid")));
    }

    static void plant(Path path, String kind) throws Exception {
        switch (kind) {
            case "chardev" -> run("mknod", path.toString(), "c", "1", "3");
            case "fifo" -> run("mkfifo", path.toString());
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
            case "file" -> Files.writeString(path, "not kanuki's");
            default -> throw new IllegalArgumentException(kind);
        }
    }

    private static void run(String... command) throws Exception {
        Process p = new ProcessBuilder(command).inheritIO().start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, String.join(" ", command) + " failed");
    }
}
