package dev.kanuki.contract;

import dev.kanuki.LockProvider;
import dev.kanuki.Offer;
import dev.kanuki.ParkingLock;
import dev.kanuki.Spools;
import dev.kanuki.spi.WorkSpool;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * A producer of {@link WorkSpoolContract}'s proof, in its own JVM: offers payloads
 * {@code TAG-I} for I in [FROM, TO) (one of them {@link ParkCounter#POISON} where asked) to a
 * {@link ParkingLock} counting with {@link ParkCounter}, and prints {@code OK I ID OUTCOME} on
 * standard output after each offer returned, then {@code DONE}.
 *
 * <p>Arguments: URI SPOOL NAME COUNTER_DIR TAG FROM TO DELAY_MS POISON_INDEX (-1 for none)
 * [{@code batch}], where SPOOL is {@code provider} (the provider's own spool) or {@code dir:PATH},
 * and {@code batch} counts whole batches ({@link ParkCounter#batching}).
 */
public final class ParkWorkerMain {
    private ParkWorkerMain() {
    }

    /**
     * Runs the producer.
     *
     * @param args as described above
     */
    public static void main(String[] args) {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, StandardCharsets.UTF_8);
        int from = Integer.parseInt(args[5]);
        int to = Integer.parseInt(args[6]);
        int poison = Integer.parseInt(args[8]);
        try (LockProvider provider = LockProvider.open(args[0])) {
            WorkSpool spool = spool(provider, args[1]);
            Path counterDir = Path.of(args[3]);
            long delay = Long.parseLong(args[7]);
            boolean batch = args.length > 9 && args[9].equals("batch");
            ParkingLock lock = ParkingLock.builder(provider.lock(args[2]), spool,
                    batch ? ParkCounter.batching(counterDir, delay) : new ParkCounter(counterDir, delay)).maxAttempts(3).build();
            for (int i = from; i < to; i++) {
                String payload = i == poison ? ParkCounter.POISON : args[4] + "-" + i;
                Offer offer = lock.offer(payload.getBytes(StandardCharsets.UTF_8));
                out.println("OK " + i + " " + offer.itemId() + " " + offer.outcome());
            }
        }
        out.println("DONE");
    }

    /**
     * Opens the spool a worker's argument names.
     *
     * @param provider the provider (for {@code provider})
     * @param spec {@code provider} or {@code dir:PATH}
     * @return the spool
     */
    static WorkSpool spool(LockProvider provider, String spec) {
        return spec.startsWith("dir:") ? Spools.directory(Path.of(spec.substring(4))) : provider.spool();
    }
}
