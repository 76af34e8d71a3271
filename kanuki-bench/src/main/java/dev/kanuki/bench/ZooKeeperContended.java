package dev.kanuki.bench;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.ZooKeeperServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

/**
 * Contended throughput on ZooKeeper: {@value #THREADS} threads in each of two JVMs (this one and
 * a worker JVM it starts) take and release one lock as fast as they can for a fixed window, kanuki
 * ({@code zookeeper://}, one provider per JVM, {@code acquire(30s)} + {@code close()}) and
 * Curator's {@code InterProcessMutex} (one client per JVM, one mutex per thread) taking turns,
 * window after window, on one server started by the test kit. A thread holds the lock for no time:
 * it releases at once and asks again. Per window: acquisitions per second of both JVMs together,
 * and the p99 of the time each acquisition waited. The medians over rounds are printed, and the
 * median of the per-round kanuki/Curator throughput ratios. Target: kanuki ≥ 1.5× Curator's
 * acquisitions per second.
 *
 * <pre>
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.ZooKeeperContended [ROUNDS [WINDOW_MS]]
 * </pre>
 */
public final class ZooKeeperContended {
    /** Threads per JVM. */
    static final int THREADS = 4;
    private static final int WARM_ROUNDS = 1;
    private static final String NAME = "contended";
    private static final List<String> SIDES = List.of("kanuki", "curator");

    private final LockProvider provider;
    private final CuratorFramework curator;

    private ZooKeeperContended(String kanukiUri, String connectString) throws InterruptedException {
        provider = LockProvider.open(kanukiUri);
        try {
            curator = ZooKeeperByHand.curator(connectString);
        } catch (InterruptedException | RuntimeException e) {
            provider.close();
            throw e;
        }
    }

    /** One JVM's share of a window: its acquisitions and each one's wait in µs. */
    record Share(int acquisitions, long[] waitsMicros) {
        String line() {
            StringBuilder out = new StringBuilder().append(acquisitions);
            for (long w : waitsMicros) {
                out.append(' ').append(w);
            }
            return out.toString();
        }

        static Share parse(String line) {
            long[] f = Arrays.stream(line.trim().split(" ")).mapToLong(Long::parseLong).toArray();
            return new Share((int) f[0], Arrays.copyOfRange(f, 1, f.length));
        }
    }

    /** An acquire + release loop body. */
    private interface Acquirer {
        /** Acquires (waiting), and returns what releases. */
        AutoCloseable acquire() throws Exception;
    }

    private Acquirer acquirer(String side) {
        if (side.equals("kanuki")) {
            DistributedLock lock = provider.lock(NAME);
            return () -> lock.acquire(Duration.ofSeconds(30));
        }
        InterProcessMutex mutex = new InterProcessMutex(curator, ZooKeeperByHand.curatorPath(NAME));
        return () -> {
            if (!mutex.acquire(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("Curator's mutex: no turn within 30 s");
            }
            return mutex::release;
        };
    }

    /** Runs {@link #THREADS} threads on one side for {@code millis}. */
    Share window(String side, long millis) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        List<long[]> waits = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
            Acquirer acquirer = acquirer(side);
            long[] mine = new long[1 << 16];
            waits.add(mine);
            Thread thread = new Thread(() -> {
                int n = 0;
                try {
                    while (System.nanoTime() < deadline) {
                        long start = System.nanoTime();
                        try (AutoCloseable held = acquirer.acquire()) {
                            long end = System.nanoTime();
                            if (end < deadline && n + 1 < mine.length) {
                                mine[++n] = (end - start) / 1000;
                            }
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
                mine[0] = n;
            }, "contender-" + side + "-" + t);
            threads.add(thread);
        }
        threads.forEach(Thread::start);
        for (Thread thread : threads) {
            thread.join();
        }
        if (failure.get() != null) {
            throw new IllegalStateException(side + " failed: " + failure.get(), failure.get());
        }
        long[] all = waits.stream().flatMapToLong(w -> Arrays.stream(w, 1, 1 + (int) w[0])).toArray();
        return new Share(all.length, all);
    }

    private void close() {
        try {
            curator.close();
        } finally {
            provider.close();
        }
    }

    /**
     * The worker JVM: {@code ZooKeeperContended --worker KANUKI_URI CONNECT}. Prints {@code READY},
     * then for each line {@code SIDE MILLIS} on its input runs a window and prints its
     * {@link Share}; halts when its input ends.
     */
    private static void worker(String kanukiUri, String connectString) throws Exception {
        ZooKeeperContended me = new ZooKeeperContended(kanukiUri, connectString);
        PrintStream out = System.out;
        out.println(HandoffPartner.READY);
        out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line; (line = in.readLine()) != null; ) {
            String[] f = line.split(" ");
            out.println(me.window(f[0], Long.parseLong(f[1])).line());
            out.flush();
        }
        me.close();
        Runtime.getRuntime().halt(0);
    }

    /**
     * @param args {@code [ROUNDS [WINDOW_MS]]}: measured rounds (default 5) and each side's window
     *     per round (default 2000 ms)
     * @throws Exception when ZooKeeper is missing or a side fails
     */
    public static void main(String[] args) throws Exception {
        if (args.length == 3 && args[0].equals("--worker")) {
            try {
                worker(args[1], args[2]);
            } catch (Throwable t) {
                t.printStackTrace();
                Runtime.getRuntime().halt(1);
            }
            return;
        }
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        long window = args.length > 1 ? Long.parseLong(args[1]) : 2000;
        try (ZooKeeperServer server = ZooKeeperServer.start()) {
            print(run(server, rounds, window), window);
        }
    }

    /** @return per side, one row per measured round: acquisitions per second, p99 wait in µs */
    static Map<String, List<double[]>> run(ZooKeeperServer server, int rounds, long window) throws Exception {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process worker = new ProcessBuilder(javaBin, "-cp", System.getProperty("java.class.path"),
                ZooKeeperContended.class.getName(), "--worker", server.kanukiUri(), server.connectString())
                .redirectError(ProcessBuilder.Redirect.INHERIT).start();
        ZooKeeperContended me = null;
        try (Writer toWorker = new java.io.OutputStreamWriter(worker.getOutputStream(), StandardCharsets.UTF_8);
             BufferedReader fromWorker = new BufferedReader(new InputStreamReader(worker.getInputStream(),
                     StandardCharsets.UTF_8))) {
            String ready = fromWorker.readLine();
            if (!HandoffPartner.READY.equals(ready)) {
                throw new IllegalStateException("the worker JVM did not start (said " + ready + "); its stderr is above");
            }
            me = new ZooKeeperContended(server.kanukiUri(), server.connectString());
            Map<String, List<double[]>> results = new LinkedHashMap<>();
            SIDES.forEach(side -> results.put(side, new ArrayList<>()));
            for (int round = 0; round < WARM_ROUNDS + rounds; round++) {
                for (String side : SIDES) {
                    toWorker.write(side + " " + window + "\n");
                    toWorker.flush();
                    Share mine = me.window(side, window);
                    String line = fromWorker.readLine();
                    if (line == null) {
                        throw new IllegalStateException("the worker JVM died; its stderr is above");
                    }
                    Share theirs = Share.parse(line);
                    double[] waits = java.util.stream.LongStream.concat(Arrays.stream(mine.waitsMicros()),
                            Arrays.stream(theirs.waitsMicros())).asDoubleStream().toArray();
                    if (mine.acquisitions() + theirs.acquisitions() == 0) {
                        throw new IllegalStateException(side + ": nothing acquired in " + window + " ms");
                    }
                    if (round >= WARM_ROUNDS) {
                        results.get(side).add(new double[] {
                            (mine.acquisitions() + theirs.acquisitions()) * 1000.0 / window,
                            InterleavedRounds.percentile(waits, 99), mine.acquisitions(), theirs.acquisitions()});
                    }
                }
            }
            return results;
        } finally {
            if (me != null) {
                me.close();
            }
            worker.getOutputStream().close();
            if (!worker.waitFor(10, TimeUnit.SECONDS)) {
                worker.destroyForcibly();
            }
        }
    }

    static void print(Map<String, List<double[]>> results, long window) {
        System.out.printf(Locale.ROOT, "zookeeper contended, 2 JVMs × %d threads, one lock, %d rounds of %d ms per side:%n",
                THREADS, results.get("kanuki").size(), window);
        for (Map.Entry<String, List<double[]>> side : results.entrySet()) {
            List<double[]> r = side.getValue();
            System.out.printf(Locale.ROOT, "  %-8s %.0f acquisitions/s, p99 wait %.0f µs (medians of rounds; acquisitions per"
                            + " window, this JVM / the other: %.0f / %.0f)%n", side.getKey(),
                    Rounds.median(r.stream().mapToDouble(x -> x[0]).toArray()),
                    Rounds.median(r.stream().mapToDouble(x -> x[1]).toArray()),
                    Rounds.median(r.stream().mapToDouble(x -> x[2]).toArray()),
                    Rounds.median(r.stream().mapToDouble(x -> x[3]).toArray()));
        }
        List<double[]> k = results.get("kanuki");
        List<double[]> c = results.get("curator");
        double[] ratios = new double[k.size()];
        for (int i = 0; i < ratios.length; i++) {
            ratios[i] = k.get(i)[0] / c.get(i)[0];
        }
        System.out.printf(Locale.ROOT, "  acquisitions/s kanuki/curator %.2fx (median of per-round ratios)%n",
                Rounds.median(ratios));
    }
}
