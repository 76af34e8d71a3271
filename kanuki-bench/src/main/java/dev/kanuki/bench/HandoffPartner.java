package dev.kanuki.bench;

import java.io.IOException;
import java.nio.file.Path;

/**
 * The second process of {@link HandoffBench}: steps a {@link HandoffRing} as fast as the other
 * party lets it, until its standard input closes (the benchmark ends or its JVM dies).
 *
 * <pre>
 * java -cp benchmarks.jar dev.kanuki.bench.HandoffPartner KIND DIR START
 * </pre>
 *
 * Prints {@code READY} once it holds its starting lock. Exits with {@code halt}, not a shutdown,
 * so a thread blocked in a lock never delays it; the OS frees its file locks.
 */
public final class HandoffPartner {
    /** What the partner prints once it holds its starting lock. */
    static final String READY = "READY";

    private HandoffPartner() {
    }

    /**
     * @param args kind ({@link HandoffParty#forProcess}), shared directory, starting lock index
     */
    public static void main(String[] args) {
        if (args.length != 3) {
            System.err.println("usage: HandoffPartner KIND DIR START");
            System.exit(2);
        }
        Thread stdinWatch = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // nothing is sent; only the end of the stream matters
                }
            } catch (IOException e) {
                // the parent is gone
            }
            Runtime.getRuntime().halt(0);
        }, "stdin-watch");
        stdinWatch.setDaemon(true);
        stdinWatch.start();
        try {
            HandoffParty party = HandoffParty.forProcess(args[0], Path.of(args[1]));
            HandoffRing ring = new HandoffRing(party, Integer.parseInt(args[2]));
            System.out.println(READY);
            System.out.flush();
            while (true) {
                ring.step();
            }
        } catch (Throwable t) {
            t.printStackTrace();
            System.err.flush();
            Runtime.getRuntime().halt(1);
        }
    }
}
