package dev.kanuki.file;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A child process for {@link PruneTest}. {@code hold URI PREFIX COUNT}: takes COUNT locks, says
 * {@code HELD} and waits to be killed. {@code count URI COUNTERS ITERATIONS NAME...}: that many
 * times, locks a random one of the names, increments its counter file in COUNTERS under the lock,
 * unlocks; says {@code DONE}.
 */
public final class PruneWorkerMain {
    private PruneWorkerMain() {
    }

    /** Starts this main in a child JVM with the test's class path; its stderr goes to a file in {@code logs}. */
    static Process start(Path logs, String... args) throws java.io.IOException {
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-cp", System.getProperty("java.class.path"), PruneWorkerMain.class.getName()));
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectError(Files.createTempFile(logs, "worker", ".err").toFile()).start();
    }

    /**
     * @param args see the class comment
     * @throws Exception on any failure (the exit code is then non-zero)
     */
    public static void main(String[] args) throws Exception {
        try (LockProvider provider = LockProvider.open(args[1])) {
            if (args[0].equals("hold")) {
                List<LockHandle> held = new ArrayList<>();
                for (int i = 0; i < Integer.parseInt(args[3]); i++) {
                    held.add(provider.lock(args[2] + i).acquire(Duration.ofSeconds(60)));
                }
                System.out.println("HELD " + held.size());
                System.out.flush();
                Thread.sleep(Long.MAX_VALUE);
            }
            Path counters = Path.of(args[2]);
            int iterations = Integer.parseInt(args[3]);
            for (int i = 0; i < iterations; i++) {
                String name = args[4 + ThreadLocalRandom.current().nextInt(args.length - 4)];
                try (LockHandle h = provider.lock(name).acquire(Duration.ofSeconds(60))) {
                    Path counter = counters.resolve(name);
                    long n = Files.exists(counter) ? Long.parseLong(Files.readString(counter).trim()) : 0;
                    Thread.onSpinWait();
                    Files.writeString(counter, Long.toString(n + 1), StandardCharsets.UTF_8);
                }
            }
            System.out.println("DONE");
        }
    }
}
