package dev.kanuki.bench;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.Offer;
import dev.kanuki.ParkHandler;
import dev.kanuki.ParkedItem;
import dev.kanuki.ParkingLock;
import dev.kanuki.Spools;
import dev.kanuki.spi.WorkSpool;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Parking vs waiting (issue 29, item 6): {@value #DEFAULT_WORKERS} worker JVMs, each one thread
 * doing short updates as fast as it can for a fixed time, against one lock on {@code file:}
 * (strategy {@code os}, the default). Two kinds of update ({@link Kind}), each measured in its own
 * rounds:
 *
 * <ul>
 *   <li>{@code cpu}: increment a counter file (read 8 bytes, write them back, no fsync) and spin
 *       to {@value #WORK_MICROS} µs in all. The handler applies parked items one by one.</li>
 *   <li>{@code durable} (a board, a counter, a log that must survive a crash): read the counter,
 *       write it plus one, {@code fsync} ({@link FileChannel#force}). The parking handler also
 *       overrides {@link dev.kanuki.ParkHandler#applyAll}: a claimed batch reads the counter once,
 *       adds the batch's size, writes and fsyncs once (flat combining).</li>
 * </ul>
 *
 * <ul>
 *   <li>{@code WAIT}: {@code acquire(60s)}, update, release. Request latency: that whole call.</li>
 *   <li>{@code PARK}: {@link ParkingLock#offer} on a directory spool ({@link Spools#directory},
 *       temp file + fsync + rename + directory fsync per parked item, as shipped) with a handler
 *       doing the update. Request latency: the {@code offer} call, which for the caller that
 *       finds the lock free includes applying everything parked meanwhile.</li>
 * </ul>
 *
 * <p>Why {@code cpu} updates cannot gain: the work under the lock is serial in both modes (one
 * holder at a time applies them), and parking adds a durable write of each item to the spool; a
 * batch has nothing to share. A durable update can gain: waiting pays one fsync per update under
 * the lock, one at a time, while a parking holder pays one fsync per batch, and the producers'
 * own fsyncs of their parked items run in parallel, outside the lock.
 *
 * <p>Each round runs both modes, one after the other, the order alternating per round, so the
 * machine's other load falls on both alike; ratios PARK/WAIT are taken within a round, then the
 * median over rounds. Throughput is updates applied per second of the period, measured until
 * the last worker's last call returned (every parked item is applied by then: the holder looks
 * at the spool after its release). After each mode's period the counter must equal the number
 * of updates made, and the spool must be empty, or the run aborts. The load average
 * ({@code /proc/loadavg}, 1 minute) is printed beside each round. Targets from the issue: PARK
 * ≥ 3× WAIT's updates/s, PARK's p99 ≤ 1/10 of WAIT's.
 *
 * <pre>
 * mvn -q -DskipTests -pl kanuki-bench -am package
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.ParkingBench [ROUNDS [SECONDS [WORKERS [KIND]]]]
 * </pre>
 * Defaults: 6 rounds after 2 warm-up rounds, 2 s per mode per round, 8 workers, KIND {@code both}
 * ({@code cpu}, then {@code durable}; or one of them): about a minute and a half per kind. With
 * {@code both} a last block repeats each kind's ratios beside its load averages. {@code -Dkanuki.bench.dir=DIR} puts the lock directory, the counter and the spool
 * under DIR instead of {@code java.io.tmpdir} (e.g. {@code /dev/shm}, where fsync costs nothing:
 * a diagnosis of the spool's fsync cost, not a durable setup).
 */
public final class ParkingBench {
    /** Worker JVMs by default. */
    static final int DEFAULT_WORKERS = 8;
    /** The update's duration under the lock, µs. */
    static final long WORK_MICROS = 200;
    static final int WARM_ROUNDS = 2;
    private static final String WORKER = "--worker";
    /** System property: the directory for the bench's files, instead of {@code java.io.tmpdir}. */
    static final String DIR_PROPERTY = "kanuki.bench.dir";
    private static final String LOCK_NAME = "counter";
    private static final Duration ACQUIRE_TIMEOUT = Duration.ofSeconds(60);

    /** The two ways of doing an update. */
    enum Mode { WAIT, PARK }

    /** The two kinds of update. */
    enum Kind {
        /** Counter read and write, no fsync, spun to {@value #WORK_MICROS} µs; parked items applied one by one. */
        CPU,
        /** Counter read, write, fsync; a parked batch applied with one read, one write and one fsync. */
        DURABLE;

        String label() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private ParkingBench() {
    }

    /**
     * @param args {@code [ROUNDS [SECONDS [WORKERS [KIND]]]]}: measured rounds after {@value #WARM_ROUNDS}
     *     warm-up rounds (default 6), seconds per mode per round (default 2), worker JVMs (default
     *     {@value #DEFAULT_WORKERS}), {@code cpu}, {@code durable} or {@code both} (default); or
     *     {@code --worker DIR} (internal)
     * @throws Exception when a worker fails or the counter is wrong
     */
    public static void main(String[] args) throws Exception {
        if (args.length == 2 && args[0].equals(WORKER)) {
            worker(Path.of(args[1]));
            return;
        }
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 6;
        long millis = args.length > 1 ? Math.round(Double.parseDouble(args[1]) * 1000) : 2000;
        int workers = args.length > 2 ? Integer.parseInt(args[2]) : DEFAULT_WORKERS;
        String kind = args.length > 3 ? args[3].toLowerCase(Locale.ROOT) : "both";
        List<Kind> kinds = kind.equals("both") ? List.of(Kind.values()) : List.of(Kind.valueOf(kind.toUpperCase(Locale.ROOT)));
        List<String> summaries = new ArrayList<>();
        for (Kind k : kinds) {
            summaries.add(print(run(workers, WARM_ROUNDS, rounds, millis, k), workers, millis, k));
        }
        if (summaries.size() > 1) {
            System.out.println("both kinds, PARK/WAIT (median of per-round ratios; targets ≥ 3x updates/s, ≤ 0.10x p99):");
            summaries.forEach(System.out::println);
        }
    }

    /** One mode's period in one round, all workers together. */
    record Period(Mode mode, long updates, long counter, long appliedAtOnce, long writes, double seconds, double p50Micros,
            double p99Micros, double maxMicros) {
        double updatesPerSecond() {
            return updates / seconds;
        }
    }

    /** One measured round: both periods, in the order run, and the 1-minute load average before and after. */
    record Round(int index, Period first, Period second, double loadBefore, double loadAfter) {
        Period of(Mode mode) {
            return first.mode() == mode ? first : second;
        }
    }

    /**
     * One worker's report of a period: its updates, how many were applied by its own call, the
     * durable counter writes it made (any worker's items; 0 for {@code cpu}), and its latencies.
     */
    record Tally(long updates, long appliedAtOnce, long writes, long[] nanos) {
        String encode() {
            StringBuilder b = new StringBuilder("DONE ").append(updates).append(' ').append(appliedAtOnce).append(' ')
                    .append(writes);
            for (long n : nanos) {
                b.append(' ').append(n);
            }
            return b.toString();
        }

        static Tally decode(String line) {
            if (line == null || !line.startsWith("DONE ")) {
                throw new IllegalStateException("a worker said " + line + " (its stderr is above)");
            }
            long[] f = Arrays.stream(line.substring(5).trim().split(" ")).mapToLong(Long::parseLong).toArray();
            return new Tally(f[0], f[1], f[2], Arrays.copyOfRange(f, 3, f.length));
        }
    }

    /** The counter file and the update done under the lock, in a worker (or the coordinator, to read and reset it). */
    static final class Counter implements AutoCloseable {
        private final FileChannel channel;
        private final ByteBuffer buffer = ByteBuffer.allocate(Long.BYTES);
        /** Durable writes since the last {@link #takeWrites()}: how many updates one fsync carried. */
        private long writes;

        Counter(Path file) throws IOException {
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
        }

        synchronized long read() throws IOException {
            buffer.clear();
            int n = 0;
            while (buffer.hasRemaining()) {
                int r = channel.read(buffer, n);
                if (r < 0) {
                    break;
                }
                n += r;
            }
            buffer.flip();
            return buffer.remaining() == Long.BYTES ? buffer.getLong() : 0;
        }

        synchronized void write(long value) throws IOException {
            buffer.clear();
            buffer.putLong(value).flip();
            int n = 0;
            while (buffer.hasRemaining()) {
                n += channel.write(buffer, n);
            }
        }

        /**
         * A durable update of {@code count} updates at once: read, add, write, fsync.
         *
         * @param count how many updates the write stands for (a parked batch's size)
         */
        synchronized void addDurably(long count) throws IOException {
            write(read() + count);
            channel.force(true);
            writes++;
        }

        /** {@return the durable writes made since the last call} */
        synchronized long takeWrites() {
            long n = writes;
            writes = 0;
            return n;
        }

        /** The work under the lock: increment, then spin until {@link #WORK_MICROS} have passed. */
        void update() throws IOException {
            long start = System.nanoTime();
            write(read() + 1);
            long end = start + TimeUnit.MICROSECONDS.toNanos(WORK_MICROS);
            while (System.nanoTime() - end < 0) {
                Thread.onSpinWait();
            }
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }

    /** A worker JVM: runs a period whenever told {@code RUN MODE MILLIS}, until its stdin ends. */
    private static void worker(Path dir) {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        try (LockProvider locks = LockProvider.open("file:" + dir.resolve("locks"));
             Counter counter = new Counter(dir.resolve("counter"))) {
            DistributedLock lock = locks.lock(LOCK_NAME);
            WorkSpool spool = Spools.directory(dir.resolve("spool"));
            // One parking lock per kind, on the same lock and spool: all workers run one kind at a time.
            ParkingLock cpuParking = ParkingLock.builder(lock, spool, (item, token) -> counter.update()).build();
            ParkingLock durableParking = ParkingLock.builder(lock, spool, new ParkHandler() {
                @Override
                public void apply(ParkedItem parked, long token) throws IOException {
                    counter.addDurably(1);
                }

                @Override
                public void applyAll(List<ParkedItem> items, long token) throws IOException {
                    // Flat combining: the whole batch in one read, one write, one fsync.
                    counter.addDurably(items.size());
                }
            }).build();
            byte[] item = {1};
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            out.println(HandoffPartner.READY);
            String line;
            while ((line = in.readLine()) != null) {
                String[] f = line.split(" ");
                Mode mode = Mode.valueOf(f[1]);
                Kind kind = Kind.valueOf(f[2]);
                ParkingLock parking = kind == Kind.CPU ? cpuParking : durableParking;
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Long.parseLong(f[3]));
                long[] nanos = new long[4096];
                int n = 0;
                long appliedAtOnce = 0;
                counter.takeWrites();
                while (System.nanoTime() - deadline < 0) {
                    long start = System.nanoTime();
                    if (mode == Mode.WAIT) {
                        try (LockHandle held = lock.acquire(ACQUIRE_TIMEOUT)) {
                            if (kind == Kind.CPU) {
                                counter.update();
                            } else {
                                counter.addDurably(1);
                            }
                        }
                        appliedAtOnce++;
                    } else {
                        Offer offer = parking.offer(item);
                        if (offer.applied()) {
                            appliedAtOnce++;
                        }
                    }
                    if (n == nanos.length) {
                        nanos = Arrays.copyOf(nanos, n * 2);
                    }
                    nanos[n++] = System.nanoTime() - start;
                }
                out.println(new Tally(n, appliedAtOnce, counter.takeWrites(), Arrays.copyOf(nanos, n)).encode());
            }
        } catch (Throwable t) {
            t.printStackTrace();
        }
        Runtime.getRuntime().halt(0);
    }

    /** @return the 1-minute load average, or NaN where {@code /proc/loadavg} cannot be read */
    static double loadAverage() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    /**
     * Starts the workers, runs {@code warm} warm-up rounds and {@code rounds} measured ones.
     *
     * @return the measured rounds
     * @throws IllegalStateException when the counter differs from the updates made, or parked
     *     items were left in the spool, after a period
     */
    static List<Round> run(int workers, int warm, int rounds, long millis, Kind kind) throws Exception {
        // -Dkanuki.bench.dir=DIR puts the locks, the counter and the spool under DIR (e.g. a tmpfs,
        // to see what the spool's fsyncs cost); by default java.io.tmpdir.
        String base = System.getProperty(DIR_PROPERTY);
        Path dir = base == null ? BenchFiles.newTempDir("kanuki-parking-bench")
                : Files.createTempDirectory(Path.of(base), "kanuki-parking-bench");
        System.out.println(kind.label() + " updates; spool, locks and counter on " + Files.getFileStore(dir).type()
                + " (" + dir + ")");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> processes = new ArrayList<>();
        List<PrintWriter> toWorkers = new ArrayList<>();
        List<BufferedReader> fromWorkers = new ArrayList<>();
        List<Round> measured = new ArrayList<>();
        WorkSpool spool = Spools.directory(dir.resolve("spool"));
        try (Counter counter = new Counter(dir.resolve("counter"))) {
            for (int w = 0; w < workers; w++) {
                Process p = new ProcessBuilder(java, "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                        ParkingBench.class.getName(), WORKER, dir.toString())
                        .redirectError(ProcessBuilder.Redirect.INHERIT).start();
                processes.add(p);
                toWorkers.add(new PrintWriter(p.getOutputStream(), true, StandardCharsets.UTF_8));
                fromWorkers.add(new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8)));
            }
            for (BufferedReader from : fromWorkers) {
                String ready = from.readLine();
                if (!HandoffPartner.READY.equals(ready)) {
                    throw new IOException("a worker did not start (said " + ready + "); its stderr is above");
                }
            }
            for (int round = 0; round < warm + rounds; round++) {
                Mode[] order = round % 2 == 0 ? new Mode[] {Mode.WAIT, Mode.PARK} : new Mode[] {Mode.PARK, Mode.WAIT};
                double loadBefore = loadAverage();
                Period[] periods = new Period[2];
                for (int k = 0; k < 2; k++) {
                    periods[k] = period(order[k], kind, millis, counter, spool, toWorkers, fromWorkers);
                }
                Round r = new Round(round - warm, periods[0], periods[1], loadBefore, loadAverage());
                System.out.println((round < warm ? "warm-up " : "") + describe(r));
                if (round >= warm) {
                    measured.add(r);
                }
            }
        } finally {
            toWorkers.forEach(PrintWriter::close);
            for (Process p : processes) {
                if (!p.waitFor(30, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            }
            BenchFiles.deleteQuietly(dir);
        }
        return measured;
    }

    /** One mode's period: counter reset, all workers started at once, their tallies merged and checked. */
    private static Period period(Mode mode, Kind kind, long millis, Counter counter, WorkSpool spool, List<PrintWriter> toWorkers,
            List<BufferedReader> fromWorkers) throws IOException {
        counter.write(0);
        long start = System.nanoTime();
        for (PrintWriter to : toWorkers) {
            to.println("RUN " + mode + " " + kind + " " + millis);
        }
        List<Tally> tallies = new ArrayList<>();
        for (BufferedReader from : fromWorkers) {
            tallies.add(Tally.decode(from.readLine()));
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        long updates = tallies.stream().mapToLong(Tally::updates).sum();
        long appliedAtOnce = tallies.stream().mapToLong(Tally::appliedAtOnce).sum();
        long writes = tallies.stream().mapToLong(Tally::writes).sum();
        long value = counter.read();
        boolean spoolEmpty = spool.isEmpty(LOCK_NAME);
        if (value != updates || !spoolEmpty) {
            throw new IllegalStateException(String.format(Locale.ROOT,
                    "%s: the counter is %d after %d updates; %s waiting in the spool: updates were %s", mode, value, updates,
                    spoolEmpty ? "nothing" : spool.list(LOCK_NAME).size() + " items", value < updates ? "lost" : "applied twice"));
        }
        long[] nanos = tallies.stream().flatMapToLong(t -> Arrays.stream(t.nanos())).toArray();
        double p50 = Rounds.percentile(nanos, 50) / 1e3;
        double p99 = Rounds.percentile(nanos, 99) / 1e3;
        double max = Rounds.percentile(nanos, 100) / 1e3;
        return new Period(mode, updates, value, appliedAtOnce, writes, seconds, p50, p99, max);
    }

    private static String describe(Round r) {
        StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "round %d (%s first):", r.index(), r.first().mode()));
        for (Period p : List.of(r.of(Mode.WAIT), r.of(Mode.PARK))) {
            line.append(String.format(Locale.ROOT, " %s %.0f upd/s p50 %.2f ms p99 %.2f ms max %.0f ms (%d updates, %d applied by"
                    + " their own call, %scounter ok) |", p.mode(), p.updatesPerSecond(), p.p50Micros() / 1e3, p.p99Micros() / 1e3,
                    p.maxMicros() / 1e3, p.updates(), p.appliedAtOnce(),
                    p.writes() == 0 ? "" : p.writes() + " counter fsyncs, "));
        }
        line.append(String.format(Locale.ROOT, " load %.2f→%.2f", r.loadBefore(), r.loadAfter()));
        return line.toString();
    }

    /**
     * Prints the medians over rounds and the ratios PARK/WAIT against the targets.
     *
     * @return one line: the kind's ratios and load averages
     */
    static String print(List<Round> rounds, int workers, long millis, Kind kind) {
        List<double[]> rows = new ArrayList<>();
        for (Round r : rounds) {
            Period wait = r.of(Mode.WAIT);
            Period park = r.of(Mode.PARK);
            rows.add(new double[] {wait.updatesPerSecond(), park.updatesPerSecond(), wait.p50Micros(), park.p50Micros(),
                wait.p99Micros(), park.p99Micros(), r.loadBefore(), r.loadAfter(),
                park.writes() == 0 ? Double.NaN : (double) park.updates() / park.writes()});
        }
        double[] loads = rows.stream().flatMapToDouble(r -> Arrays.stream(r, 6, 8)).toArray();
        Arrays.sort(loads);
        String what = kind == Kind.CPU ? WORK_MICROS + " µs cpu updates" : "durable updates (fsync; PARK: one per batch)";
        System.out.printf(Locale.ROOT, "parking vs waiting: %d worker JVMs, file: os, %s, %d rounds of %.1f s per mode,"
                + " median over rounds; load average %.2f (%.2f–%.2f), %d cores%n", workers, what, rounds.size(),
                millis / 1000.0, Rounds.median(loads), loads[0], loads[loads.length - 1],
                Runtime.getRuntime().availableProcessors());
        Rounds.printMedians("  updates/s  ", new String[] {"WAIT", "PARK"}, Rounds.columns(rows, 0, 2), "%.0f");
        Rounds.printMedians("  p50 µs     ", new String[] {"WAIT", "PARK"}, Rounds.columns(rows, 2, 4), "%.0f");
        Rounds.printMedians("  p99 µs     ", new String[] {"WAIT", "PARK"}, Rounds.columns(rows, 4, 6), "%.0f");
        if (kind == Kind.DURABLE) {
            System.out.printf(Locale.ROOT, "  PARK updates per counter fsync (combining): median %.1f%n", Rounds.median(rows, 8));
        }
        System.out.println("  median of per-round ratios:");
        Rounds.printRatio("updates/s PARK/WAIT", rows, 1, 0, "≥ 3x");
        Rounds.printRatio("p99 PARK/WAIT", rows, 5, 4, "≤ 0.10x");
        Rounds.printRatio("p50 PARK/WAIT", rows, 3, 2, "");
        double throughput = Rounds.ratio(rows, 1, 0);
        double p99 = Rounds.ratio(rows, 5, 4);
        System.out.printf(Locale.ROOT, "  targets: throughput %s (%.2fx), p99 %s (%.2fx)%n", throughput >= 3 ? "met" : "NOT met",
                throughput, p99 <= 0.1 ? "met" : "NOT met", p99);
        return String.format(Locale.ROOT, "  %-8s updates/s %.2fx (%s), p99 %.2fx (%s), p50 %.2fx; load %.2f (%.2f–%.2f)%s",
                kind.label(), throughput, throughput >= 3 ? "met" : "NOT met", p99, p99 <= 0.1 ? "met" : "NOT met",
                Rounds.ratio(rows, 3, 2), Rounds.median(loads), loads[0], loads[loads.length - 1],
                kind == Kind.DURABLE ? String.format(Locale.ROOT, "; PARK %.1f updates per counter fsync", Rounds.median(rows, 8)) : "");
    }
}
