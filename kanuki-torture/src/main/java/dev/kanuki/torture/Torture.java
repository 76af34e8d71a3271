package dev.kanuki.torture;

import dev.kanuki.LockProvider;
import java.io.BufferedInputStream;
import java.io.BufferedReader;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.function.LongConsumer;

/**
 * The torture test: several real processes increment one counter file, each increment under the
 * lock, and the result shows whether any update was lost, whether two holders were ever inside
 * at once, and whether fencing tokens only grew. Without a lock the same run loses updates,
 * which shows the harness can fail.
 *
 * <p>Each worker is a fresh JVM running {@link TortureWorker} on this JVM's class path
 * ({@code java.class.path}), so the harness works from the CLI's jar and from test class paths
 * alike. Workers warm up, then wait at a barrier and start together. Everything they write goes
 * to {@link TortureOptions#workDir()}: {@code counter} (a zero-padded decimal number),
 * {@code overlap.log} (one {@code E} line
 * per entry to the critical section, one {@code X} line per exit, appended atomically),
 * {@code worker-N.err} (the worker's standard error) and {@code worker-N.latencies}.
 */
public final class Torture {
    private static final Duration PROGRESS_EVERY = Duration.ofMillis(100);
    private static final int ERROR_TAIL_LINES = 15;

    private Torture() {
    }

    /**
     * Runs the torture test and waits for it to end.
     *
     * @param options what to run
     * @param progress called now and then with the number of increments completed over all
     *     workers, from the calling thread; may be null
     * @return what the run observed
     * @throws IllegalArgumentException when the backend URI is invalid or names no known backend
     * @throws dev.kanuki.LockBackendException when the backend cannot be opened
     * @throws IOException when the work directory cannot be used or a worker fails before the
     *     start (the message includes the worker's standard error)
     * @throws InterruptedException when the calling thread is interrupted; the workers are killed
     */
    public static TortureResult run(TortureOptions options, LongConsumer progress)
            throws IOException, InterruptedException {
        LongConsumer report = progress == null ? n -> { } : progress;
        if (options.locking()) {
            // Fail here, with the user's error, rather than in every worker.
            try (LockProvider provider = LockProvider.open(options.backendUri())) {
                provider.lock(options.lockName());
            }
        }
        Run run = new Run(options);
        run.prepare();
        Thread killer = new Thread(run::killAll, "kanuki-torture-kill-workers");
        Runtime.getRuntime().addShutdownHook(killer);
        try {
            return run.execute(report);
        } finally {
            run.killAll();
            try {
                Runtime.getRuntime().removeShutdownHook(killer);
            } catch (IllegalStateException e) {
                // The JVM is shutting down; the hook kills the workers.
            }
        }
    }

    /** The state of one run: files, processes, and their exit times. */
    private static final class Run {
        final TortureOptions options;
        final Path workDir;
        final Path counterFile;
        final Path logFile;
        final Path barrierDir;
        final List<Process> processes = new ArrayList<>();
        /** Workers this harness killed; their exit is reported once, not one by one. */
        final Set<Integer> killed = ConcurrentHashMap.newKeySet();
        final AtomicLongArray exitNanos;
        final CountDownLatch exited;
        long logOffset;
        long completed;

        Run(TortureOptions options) {
            this.options = options;
            this.workDir = options.workDir().toAbsolutePath();
            this.counterFile = workDir.resolve("counter");
            this.logFile = workDir.resolve("overlap.log");
            this.barrierDir = workDir.resolve("barrier");
            this.exitNanos = new AtomicLongArray(options.processes());
            this.exited = new CountDownLatch(options.processes());
        }

        Path errFile(int worker) {
            return workDir.resolve("worker-" + worker + ".err");
        }

        Path resultFile(int worker) {
            return workDir.resolve("worker-" + worker + ".latencies");
        }

        /** Creates the work directory and clears what an earlier run left in it. */
        void prepare() throws IOException {
            Files.createDirectories(workDir);
            Files.deleteIfExists(counterFile);
            Files.deleteIfExists(logFile);
            Files.createDirectories(barrierDir);
            try (DirectoryStream<Path> old = Files.newDirectoryStream(barrierDir)) {
                for (Path file : old) {
                    Files.deleteIfExists(file);
                }
            }
            for (int i = 0; i < options.processes(); i++) {
                Files.deleteIfExists(errFile(i));
                Files.deleteIfExists(resultFile(i));
            }
            Files.createFile(logFile);
        }

        TortureResult execute(LongConsumer progress) throws IOException, InterruptedException {
            for (int i = 0; i < options.processes(); i++) {
                start(i);
            }
            awaitReady();
            long go = System.nanoTime();
            Files.createFile(barrierDir.resolve(TortureWorker.GO_FILE));

            int firstFailed = -1;
            int stoppedAfterFailure = 0;
            boolean deadlinePassed = false;
            long deadline = go + runDeadline().toNanos();
            while (!exited.await(PROGRESS_EVERY.toMillis(), TimeUnit.MILLISECONDS)) {
                reportProgress(progress);
                firstFailed = firstFailure();
                if (firstFailed >= 0) {
                    stoppedAfterFailure = killAll();
                    break;
                }
                if (System.nanoTime() - deadline > 0) {
                    deadlinePassed = true;
                    killAll();
                    break;
                }
            }
            for (Process process : processes) {
                process.waitFor();
            }
            // onExit() actions may run a moment after waitFor() returns; the latch waits for them.
            exited.await(10, TimeUnit.SECONDS);
            long end = go;
            for (int i = 0; i < options.processes(); i++) {
                long exit = exitNanos.get(i);
                end = Math.max(end, exit == 0 ? System.nanoTime() : exit);
            }
            reportProgress(progress);

            List<String> workerErrors = new ArrayList<>();
            List<long[]> samples = new ArrayList<>();
            for (int i = 0; i < options.processes(); i++) {
                Process process = processes.get(i);
                int code = process.exitValue();
                if (code == 0) {
                    samples.add(readLatencies(resultFile(i)));
                } else if (deadlinePassed && killed.contains(i)) {
                    workerErrors.add("worker " + i + " was still running after " + runDeadline().toSeconds()
                            + "s and was stopped" + describeTail(errFile(i)));
                } else if (!killed.contains(i)) {
                    String stopped = i != firstFailed || stoppedAfterFailure == 0 ? ""
                            : stoppedAfterFailure == 1 ? " (then 1 other worker was stopped)"
                            : " (then " + stoppedAfterFailure + " other workers were stopped)";
                    workerErrors.add("worker " + i + " exited with " + code + stopped + describeTail(errFile(i)));
                }
            }
            return analyse(Duration.ofNanos(Math.max(1, end - go)), samples, workerErrors);
        }

        private void start(int index) throws IOException {
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.add("-XX:+UseSerialGC");
            command.add("-XX:TieredStopAtLevel=1");
            command.add("-cp");
            command.add(System.getProperty("java.class.path"));
            command.add(TortureWorker.class.getName());
            command.add(options.locking() ? options.backendUri() : TortureWorker.NO_LOCK);
            command.add(options.lockName());
            command.add(counterFile.toString());
            command.add(logFile.toString());
            command.add(Integer.toString(options.iterations()));
            command.add(Long.toString(nanos(options.holdTime())));
            command.add(Long.toString(nanos(options.acquireTimeout())));
            command.add(Integer.toString(index));
            command.add(resultFile(index).toString());
            command.add(barrierDir.toString());
            ProcessBuilder builder = new ProcessBuilder(command)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(errFile(index).toFile());
            Process process = builder.start();
            process.getOutputStream().close();
            processes.add(process);
            process.onExit().thenRun(() -> {
                exitNanos.set(index, System.nanoTime());
                exited.countDown();
            });
        }

        /** Waits until every worker has created its ready file; fails when one dies or is slow. */
        private void awaitReady() throws IOException, InterruptedException {
            // Generous: a worker JVM's start is not what is tested, and at load 40-60 on two cores
            // one needed more than 60 s to start, open its backend and take the lock once.
            Duration limit = Duration.ofSeconds(Math.max(180, 2L * options.processes()));
            long deadline = System.nanoTime() + limit.toNanos();
            int ready = 0;
            while (true) {
                while (ready < options.processes()
                        && Files.exists(barrierDir.resolve(TortureWorker.READY_PREFIX + ready))) {
                    ready++;
                }
                if (ready == options.processes()) {
                    return;
                }
                for (int i = 0; i < options.processes(); i++) {
                    Process process = processes.get(i);
                    if (!process.isAlive()) {
                        process.waitFor();
                        killAll();
                        throw new IOException("torture worker " + i + " exited with " + process.exitValue()
                                + " before the start" + describeTail(errFile(i)));
                    }
                }
                if (System.nanoTime() - deadline > 0) {
                    killAll();
                    throw new IOException("torture worker " + ready + " was not ready within " + limit.toSeconds()
                            + "s (it warms up by opening " + options.backendUri() + " and taking the lock)"
                            + describeTail(errFile(ready)));
                }
                Thread.sleep(5);
            }
        }

        /** {@return the index of a worker that exited non-zero, or -1} */
        private int firstFailure() {
            for (int i = 0; i < processes.size(); i++) {
                Process process = processes.get(i);
                if (!process.isAlive() && process.exitValue() != 0) {
                    return i;
                }
            }
            return -1;
        }

        /** {@return how many workers were still running and were killed} */
        synchronized int killAll() {
            int count = 0;
            for (int i = 0; i < processes.size(); i++) {
                Process process = processes.get(i);
                if (process.isAlive()) {
                    process.destroyForcibly();
                    killed.add(i);
                    count++;
                }
            }
            return count;
        }

        /** A generous limit on the whole run, so a hung worker cannot hang the caller forever. */
        private Duration runDeadline() {
            long perIteration = 2 * nanos(options.holdTime()) + TimeUnit.MILLISECONDS.toNanos(5);
            long work = (long) options.processes() * options.iterations() * perIteration;
            return Duration.ofMinutes(5).plusNanos(Math.min(work, TimeUnit.DAYS.toNanos(1)));
        }

        /** Counts the X lines appended since the last call and reports the total. */
        private void reportProgress(LongConsumer progress) throws IOException {
            try (FileChannel log = FileChannel.open(logFile, StandardOpenOption.READ)) {
                ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
                while (true) {
                    buf.clear();
                    int n = log.read(buf, logOffset);
                    if (n <= 0) {
                        break;
                    }
                    logOffset += n;
                    for (int i = 0; i < n; i++) {
                        if (buf.get(i) == 'X') {
                            completed++;
                        }
                    }
                }
            }
            progress.accept(completed);
        }

        private TortureResult analyse(Duration elapsed, List<long[]> samples, List<String> workerErrors)
                throws IOException {
            long expected = (long) options.processes() * options.iterations();
            long actual = readCounter();
            long overlaps = 0;
            long fencingViolations = 0;
            long acquisitions = 0;
            long previousToken = Long.MIN_VALUE;
            Set<String> inside = new HashSet<>();
            try (BufferedReader log = Files.newBufferedReader(logFile, StandardCharsets.US_ASCII)) {
                String line;
                while ((line = log.readLine()) != null) {
                    String[] f = line.split(" ");
                    if (f.length != 4) {
                        continue;
                    }
                    String worker = f[1];
                    if (f[0].equals("E")) {
                        acquisitions++;
                        boolean someoneElseInside = inside.size() > (inside.contains(worker) ? 1 : 0);
                        if (someoneElseInside) {
                            overlaps++;
                        }
                        inside.add(worker);
                        long token = Long.parseLong(f[3]);
                        if (options.locking() && acquisitions > 1 && token <= previousToken) {
                            fencingViolations++;
                        }
                        previousToken = token;
                    } else if (f[0].equals("X")) {
                        inside.remove(worker);
                    }
                }
            }
            long[] all = samples.stream().flatMapToLong(Arrays::stream).sorted().toArray();
            double seconds = elapsed.toNanos() / 1e9;
            return new TortureResult(expected, actual, expected - actual, overlaps, fencingViolations, elapsed,
                    acquisitions / seconds, percentile(all, 0.50), percentile(all, 0.99),
                    all.length == 0 ? 0 : all[all.length - 1], workerErrors);
        }

        private long readCounter() throws IOException {
            try {
                String text = Files.readString(counterFile, StandardCharsets.US_ASCII).trim();
                return text.isEmpty() ? 0 : Long.parseLong(text);
            } catch (NoSuchFileException e) {
                return 0;
            } catch (NumberFormatException e) {
                throw new IOException("counter file " + counterFile + " does not hold a number", e);
            }
        }
    }

    /** Nearest-rank percentile of sorted samples; 0 when there are none. */
    static long percentile(long[] sorted, double p) {
        if (sorted.length == 0) {
            return 0;
        }
        int rank = (int) Math.ceil(p * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
    }

    private static long[] readLatencies(Path file) throws IOException {
        try (InputStream raw = Files.newInputStream(file);
             DataInputStream in = new DataInputStream(new BufferedInputStream(raw))) {
            int n = in.readInt();
            long[] samples = new long[n];
            for (int i = 0; i < n; i++) {
                samples[i] = in.readLong();
            }
            return samples;
        }
    }

    /** {@return ": " and the last lines of a worker's standard error, or "" when it is empty} */
    static String describeTail(Path errFile) {
        try (RandomAccessFile file = new RandomAccessFile(errFile.toFile(), "r")) {
            long length = file.length();
            int size = (int) Math.min(length, 4096);
            byte[] bytes = new byte[size];
            file.seek(length - size);
            file.readFully(bytes);
            String[] lines = new String(bytes, StandardCharsets.UTF_8).strip().split("\n");
            int from = Math.max(0, lines.length - ERROR_TAIL_LINES);
            String tail = String.join("\n", Arrays.asList(lines).subList(from, lines.length)).strip();
            return tail.isEmpty() ? " (no error output)" : ":\n" + tail;
        } catch (IOException e) {
            return " (its error output " + errFile + " is unreadable: " + e.getMessage() + ")";
        }
    }

    private static long nanos(Duration d) {
        try {
            return d.toNanos();
        } catch (ArithmeticException e) {
            return Long.MAX_VALUE;
        }
    }
}
