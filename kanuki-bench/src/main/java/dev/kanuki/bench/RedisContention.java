package dev.kanuki.bench;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.RedisServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/**
 * Redis contention: {@value #THREADS} threads in each of two JVMs (this one and a partner this
 * one starts) take and release one lock name as fast as they can for a fixed time (empty critical
 * section). Reports acquisitions per second (both JVMs together) and the wait of an acquisition
 * (from asking to holding: p50, p99). Implementations, interleaved round by round on one
 * {@code redis-server} started by the test kit:
 *
 * <ul>
 *   <li>{@code kanuki}: {@code redis://}, {@code acquire(30s)} + {@code close()}, one provider per JVM;</li>
 *   <li>{@code redisson}: Redisson 4.7.0 {@code RLock.lock(30 s lease)} + {@code unlock()}, one client per JVM;</li>
 *   <li>{@code rawSpin}: {@code SET NX PX} retried after a {@value #SPIN_PAUSE_MICROS} µs pause
 *       until it succeeds, then compare-and-delete ({@link RedisByHand}, one Lettuce connection per
 *       JVM shared by its threads): no queue, no wake-up.</li>
 * </ul>
 *
 * <p>Acquisitions that complete after the period are not counted (nor are their waits). Ratios
 * are taken within each round, then the median over rounds; the first {@value #WARM_ROUNDS} rounds
 * are warm-up and are dropped (the first round after one warm-up round was still 2–10× slower
 * for every implementation). Target: kanuki ≥ 1.5× Redisson's acquisitions/s, with a lower p99 wait.
 *
 * <pre>
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.RedisContention [ROUNDS [SECONDS]]
 * </pre>
 */
public final class RedisContention {
    /** Threads per JVM. */
    static final int THREADS = 4;
    static final long SPIN_PAUSE_MICROS = 100;
    private static final int WARM_ROUNDS = 2;
    /** The implementations, in the order of a round's columns. */
    static final String[] IMPLS = {"kanuki", "redisson", "rawSpin"};
    private static final String PARTNER = "--partner";
    private static final String LOCK_NAME = "contention";

    private RedisContention() {
    }

    /**
     * @param args {@code [ROUNDS [SECONDS]]}: measured rounds after the warm-up rounds (default 5),
     *     seconds per implementation per round (default 2); or {@code --partner URI} (internal)
     * @throws Exception when an implementation fails
     */
    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals(PARTNER)) {
            partner(args[1]);
            return;
        }
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        long millis = args.length > 1 ? Math.round(Double.parseDouble(args[1]) * 1000) : 2000;
        try (RedisServer server = RedisServer.start()) {
            run(server.kanukiUri(), rounds, millis);
        }
    }

    /** What one JVM's threads did in one period. */
    record Tally(long acquisitions, long[] waitNanos) {
        String encode() {
            StringBuilder b = new StringBuilder("DONE ").append(acquisitions);
            for (long w : waitNanos) {
                b.append(' ').append(w);
            }
            return b.toString();
        }

        static Tally decode(String line) {
            if (line == null || !line.startsWith("DONE ")) {
                throw new IllegalStateException("the partner said " + line);
            }
            long[] numbers = Arrays.stream(line.substring(5).trim().split(" ")).mapToLong(Long::parseLong).toArray();
            return new Tally(numbers[0], Arrays.copyOfRange(numbers, 1, numbers.length));
        }
    }

    /** One JVM's side: a client of each implementation, and the contending threads. */
    static final class Contenders implements AutoCloseable {
        private final LockProvider provider;
        private final RedissonClient redisson;
        private final RedisByHand raw;

        Contenders(String uri) {
            provider = LockProvider.open(uri);
            redisson = RedisInterleaved.redisson(uri);
            raw = new RedisByHand(uri);
        }

        /** One acquire+release; returns the nanoseconds spent waiting to hold the lock. */
        private interface Cycle {
            long run() throws Exception;
        }

        private Cycle cycle(String impl) {
            switch (impl) {
                case "kanuki": {
                    DistributedLock lock = provider.lock(LOCK_NAME);
                    Duration timeout = Duration.ofSeconds(30);
                    return () -> {
                        long start = System.nanoTime();
                        dev.kanuki.LockHandle h = lock.acquire(timeout);
                        long waited = System.nanoTime() - start;
                        h.close();
                        return waited;
                    };
                }
                case "redisson": {
                    RLock lock = redisson.getLock("redisson:" + LOCK_NAME);
                    return () -> {
                        long start = System.nanoTime();
                        lock.lock(RedisByHand.LEASE_MILLIS, TimeUnit.MILLISECONDS);
                        long waited = System.nanoTime() - start;
                        lock.unlock();
                        return waited;
                    };
                }
                case "rawSpin": {
                    String id = UUID.randomUUID().toString();
                    return () -> {
                        String value = id + ":" + Thread.currentThread().getId() + ":" + System.nanoTime();
                        long start = System.nanoTime();
                        while (!raw.setNx("raw:" + LOCK_NAME, value)) {
                            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(SPIN_PAUSE_MICROS));
                        }
                        long waited = System.nanoTime() - start;
                        raw.deleteIfMine("raw:" + LOCK_NAME, value);
                        return waited;
                    };
                }
                default:
                    throw new IllegalArgumentException("one of " + Arrays.toString(IMPLS) + ", not " + impl);
            }
        }

        /**
         * Runs {@code threads} threads of {@code impl} for {@code millis} and counts what they
         * completed within it.
         */
        Tally run(String impl, int threads, long millis) throws Exception {
            Cycle cycle = cycle(impl);
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
            long[][] waits = new long[threads][];
            int[] counts = new int[threads];
            Throwable[] failures = new Throwable[threads];
            List<Thread> workers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int me = t;
                Thread worker = new Thread(() -> {
                    long[] mine = new long[1024];
                    int n = 0;
                    try {
                        while (System.nanoTime() < deadline) {
                            long waited = cycle.run();
                            if (System.nanoTime() - waited > deadline) {
                                break; // acquired after the period: not counted
                            }
                            if (n == mine.length) {
                                mine = Arrays.copyOf(mine, n * 2);
                            }
                            mine[n++] = waited;
                        }
                    } catch (Throwable e) {
                        failures[me] = e;
                    }
                    waits[me] = Arrays.copyOf(mine, n);
                    counts[me] = n;
                }, "contender-" + impl + "-" + t);
                workers.add(worker);
                worker.start();
            }
            for (Thread worker : workers) {
                worker.join();
            }
            for (Throwable failure : failures) {
                if (failure != null) {
                    throw new IllegalStateException(impl + " failed: " + failure, failure);
                }
            }
            long total = Arrays.stream(counts).sum();
            return new Tally(total, Arrays.stream(waits).flatMapToLong(Arrays::stream).toArray());
        }

        @Override
        public void close() {
            try {
                raw.close();
                redisson.shutdown();
            } finally {
                provider.close();
            }
        }
    }

    /** The partner JVM: runs a period whenever told {@code RUN IMPL MILLIS}, until stdin ends. */
    private static void partner(String uri) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        try (Contenders contenders = new Contenders(uri)) {
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            out.println(HandoffPartner.READY);
            String line;
            while ((line = in.readLine()) != null) {
                String[] f = line.split(" ");
                out.println(contenders.run(f[1], THREADS, Long.parseLong(f[2])).encode());
            }
        } catch (Throwable t) {
            t.printStackTrace();
        }
        Runtime.getRuntime().halt(0);
    }

    /**
     * Starts the partner JVM, runs {@code WARM_ROUNDS + rounds} rounds and prints the medians and
     * ratios.
     *
     * @return the measured rounds: acquisitions/s of each implementation, then p99 wait (µs),
     *     then p50 wait (µs)
     */
    static List<double[]> run(String uri, int rounds, long millis) throws Exception {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process partner = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                RedisContention.class.getName(), PARTNER, uri).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        List<double[]> results = new ArrayList<>();
        List<String> split = new ArrayList<>();
        try (Contenders mine = new Contenders(uri);
             PrintWriter toPartner = new PrintWriter(partner.getOutputStream(), true, StandardCharsets.UTF_8);
             BufferedReader fromPartner = new BufferedReader(new InputStreamReader(partner.getInputStream(),
                     StandardCharsets.UTF_8))) {
            String ready = fromPartner.readLine();
            if (!HandoffPartner.READY.equals(ready)) {
                throw new IOException("the partner did not start (said " + ready + "); its stderr is above");
            }
            for (int round = 0; round < WARM_ROUNDS + rounds; round++) {
                double[] r = new double[3 * IMPLS.length];
                StringBuilder shares = new StringBuilder();
                for (int k = 0; k < IMPLS.length; k++) {
                    toPartner.println("RUN " + IMPLS[k] + " " + millis);
                    Tally here = mine.run(IMPLS[k], THREADS, millis);
                    Tally there = Tally.decode(fromPartner.readLine());
                    long[] waits = new long[here.waitNanos().length + there.waitNanos().length];
                    System.arraycopy(here.waitNanos(), 0, waits, 0, here.waitNanos().length);
                    System.arraycopy(there.waitNanos(), 0, waits, here.waitNanos().length, there.waitNanos().length);
                    r[k] = (here.acquisitions() + there.acquisitions()) * 1000.0 / millis;
                    r[IMPLS.length + k] = Rounds.percentile(waits, 99) / 1e3;
                    r[2 * IMPLS.length + k] = Rounds.percentile(waits, 50) / 1e3;
                    shares.append(String.format(Locale.ROOT, " %s %d+%d (max wait %.0f ms)", IMPLS[k], here.acquisitions(),
                            there.acquisitions(), Rounds.percentile(waits, 100) / 1e6));
                }
                if (round >= WARM_ROUNDS) {
                    results.add(r);
                    split.add(shares.toString().trim());
                }
            }
        } finally {
            partner.getOutputStream().close();
            if (!partner.waitFor(10, TimeUnit.SECONDS)) {
                partner.destroyForcibly();
            }
        }
        System.out.printf(Locale.ROOT, "redis contention, %d threads in each of 2 JVMs on one name, %d rounds of %.1f s"
                + " per implementation, median over rounds%n", THREADS, rounds, millis / 1000.0);
        Rounds.printMedians("  acquisitions/s", IMPLS, results, "%.0f");
        Rounds.printMedians("  p99 wait µs   ", IMPLS, Rounds.columns(results, IMPLS.length, 2 * IMPLS.length), "%.0f");
        Rounds.printMedians("  p50 wait µs   ", IMPLS, Rounds.columns(results, 2 * IMPLS.length, 3 * IMPLS.length), "%.0f");
        System.out.println("  acquisitions per round, this JVM + the partner: " + String.join(" | ", split));
        System.out.println("  median of per-round ratios:");
        Rounds.printRatio("acq/s kanuki/redisson", results, 0, 1, "≥ 1.5x");
        Rounds.printRatio("p99 wait kanuki/redisson", results, 3, 4, "< 1x");
        Rounds.printRatio("acq/s kanuki/rawSpin", results, 0, 2, "");
        Rounds.printRatio("p99 wait kanuki/rawSpin", results, 3, 5, "");
        return results;
    }
}
