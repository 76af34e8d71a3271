package dev.kanuki.bench;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.time.Duration;
import java.time.Instant;

/**
 * The waiting process of {@link PollingAttempts}: opens a provider on the URI, takes and
 * releases another lock a few hundred times (warm-up), prints
 * {@code WAITING}, waits for lock {@code probe} (held by the parent), then prints
 * {@code ACQUIRED <epoch µs> <waited µs>} and exits.
 *
 * <pre>
 * java -cp benchmarks.jar dev.kanuki.bench.PollingWaiter URI
 * </pre>
 */
public final class PollingWaiter {
    static final String NAME = "probe";
    static final String WARM_UP = "warmup";
    private static final int WARM_UP_ROUNDS = 300;

    private PollingWaiter() {
    }

    public static void main(String[] args) {
        try (LockProvider provider = LockProvider.open(args[0])) {
            // Warm the acquire path first (class loading, JIT), so the handoff printed below is
            // the wake-up, not the first successful acquisition of a cold JVM.
            var warm = provider.lock(WARM_UP);
            for (int i = 0; i < WARM_UP_ROUNDS; i++) {
                warm.acquire(Duration.ofSeconds(5)).close();
            }
            var lock = provider.lock(NAME);
            System.out.println("WAITING");
            System.out.flush();
            long start = System.nanoTime();
            try (LockHandle ignored = lock.acquire(Duration.ofSeconds(60))) {
                long waited = (System.nanoTime() - start) / 1000;
                System.out.println("ACQUIRED " + PollingAttempts.epochMicros(Instant.now()) + " " + waited);
                System.out.flush();
            }
        }
        Runtime.getRuntime().halt(0);
    }
}
