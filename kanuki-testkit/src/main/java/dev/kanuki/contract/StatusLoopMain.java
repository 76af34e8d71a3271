package dev.kanuki.contract;

import dev.kanuki.LockProvider;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A second process for {@link LockProviderContract}: reads a lock's status again and
 * again, as a {@code kanuki status} loop does, until a stop file appears; prints {@code READY}
 * once it has read it once, the number of reads so far after every {@value #PROGRESS_EVERY}
 * reads, and the number of reads at the end.
 *
 * <p>Arguments: {@code URI NAME STOP_FILE}.
 */
public final class StatusLoopMain {
    /** How many reads between two progress lines. */
    public static final int PROGRESS_EVERY = 10;

    private StatusLoopMain() {
    }

    /**
     * Runs the status loop process.
     *
     * @param args the backend URI, the lock name, the stop file
     * @throws Exception when the backend fails: the parent sees a non-zero exit and the trace
     */
    public static void main(String[] args) throws Exception {
        Path stop = Path.of(args[2]);
        long reads = 0;
        try (LockProvider provider = LockProvider.open(args[0])) {
            provider.status(args[1]);
            System.out.println("READY");
            System.out.flush();
            while (!Files.exists(stop)) {
                provider.status(args[1]);
                reads++;
                if (reads % PROGRESS_EVERY == 0) {
                    System.out.println(reads); // so the parent tries for as long as it takes to see reads
                    System.out.flush();
                }
            }
        }
        System.out.println(reads);
        System.exit(0);
    }
}
