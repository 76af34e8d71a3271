package dev.kanuki.file;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Manual measurement (not a test): N distinct names acquired and released per strategy, the
 * files left; then N locks held at once and the time of one listing ({@code kanuki status}).
 * Run: {@code java -cp ... dev.kanuki.file.DirectoryStormMain DIR [N]}.
 */
public final class DirectoryStormMain {
    private DirectoryStormMain() {
    }

    public static void main(String[] args) throws Exception {
        Path base = Path.of(args[0]);
        int n = args.length > 1 ? Integer.parseInt(args[1]) : 10_000;
        List<String> strategies = args.length > 2 ? List.of(args[2].split(","))
                : List.of("os", "mkdir", "symlink", "rename", "create", "queue");
        for (String strategy : strategies) {
            Path dir = Files.createDirectories(base.resolve(strategy));
            try (LockProvider provider = LockProvider.open("file:" + dir + "?strategy=" + strategy)) {
                long start = System.nanoTime();
                for (int i = 0; i < n; i++) {
                    provider.lock("job-" + i).acquire(Duration.ofSeconds(10)).close();
                }
                long storm = System.nanoTime() - start;
                long left;
                try (Stream<Path> files = Files.list(dir)) {
                    left = files.count();
                }
                List<LockHandle> held = new ArrayList<>();
                for (int i = 0; i < n; i++) {
                    held.add(provider.lock("held-" + i).acquire(Duration.ofSeconds(10)));
                }
                long listStart = System.nanoTime();
                int listed = provider.list().size();
                long listing = System.nanoTime() - listStart;
                for (LockHandle h : held) {
                    h.close();
                }
                System.out.printf("%-8s %d names: %.1f s, %d files left; %d held: status lists %d in %d ms%n",
                        strategy, n, storm / 1e9, left, n, listed, listing / 1_000_000);
            }
        }
    }
}
