package dev.kanuki.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** Temporary directories for the file benchmarks. */
final class BenchFiles {
    private BenchFiles() {
    }

    /** @return a new empty directory under {@code java.io.tmpdir} (on this VM: ext4) */
    static Path newTempDir(String prefix) throws IOException {
        return Files.createTempDirectory(prefix);
    }

    /** Deletes a directory tree, best effort; a benchmark must not fail while cleaning up. */
    static void deleteQuietly(Path dir) {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    // left for the OS's tmp cleaner
                }
            });
        } catch (IOException e) {
            // same
        }
    }
}
