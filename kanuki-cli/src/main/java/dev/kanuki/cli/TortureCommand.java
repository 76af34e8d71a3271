package dev.kanuki.cli;

import dev.kanuki.LockProvider;
import dev.kanuki.spi.Durations;
import dev.kanuki.spi.SafeNames;
import dev.kanuki.torture.Torture;
import dev.kanuki.torture.TortureOptions;
import dev.kanuki.torture.TortureResult;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongConsumer;
import me.tongfei.progressbar.ConsoleProgressBarConsumer;
import me.tongfei.progressbar.ProgressBar;
import me.tongfei.progressbar.ProgressBarBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code kanuki torture}: several processes increment a shared counter file under the lock;
 * reports lost updates, overlaps, fencing violations, throughput and acquire latency.
 */
@Command(name = "torture",
        mixinStandardHelpOptions = true,
        description = {
            "Check a backend for mutual exclusion: --procs processes each increment a shared counter "
                    + "file --iterations times under the lock, then the counter must equal procs x iterations.",
            "-b none runs the same without a lock, to show what is lost.",
        })
final class TortureCommand implements Callable<Integer> {
    private static final String NO_LOCK = "none";
    /** One {@link #deleteTree} at a time. */
    private static final ReentrantLock DELETING = new ReentrantLock();

    @Spec
    CommandSpec spec;

    @Option(names = {"-b", "--backend"}, paramLabel = "URI",
            description = "The lock backend, or 'none' for no lock (default: ${DEFAULT-VALUE}).")
    String backend = LockProvider.DEFAULT_URI;

    @Option(names = "--procs", paramLabel = "N", description = "Worker processes (default: ${DEFAULT-VALUE}).")
    int processes = 4;

    @Option(names = "--iterations", paramLabel = "M",
            description = "Increments per process (default: ${DEFAULT-VALUE}).")
    int iterations = 500;

    @Option(names = "--hold", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Pause between reading and writing the counter, to widen the race (default: 0).")
    Duration hold = Duration.ZERO;

    @Option(names = "--acquire-timeout", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "How long a worker may wait for the lock before it fails (default: 60s).")
    Duration acquireTimeout = Duration.ofSeconds(60);

    @Option(names = "--name", paramLabel = "NAME", description = "The lock's name (default: ${DEFAULT-VALUE}).")
    String lockName = "kanuki-torture";

    @Option(names = "--dir", paramLabel = "DIR",
            description = "Keep the counter, overlap log and worker output in DIR (default: a temporary "
                    + "directory, deleted afterwards).")
    Path dir;

    @Option(names = "--json", description = "Print one JSON object on standard output instead of a table.")
    boolean json;

    @Override
    public Integer call() throws IOException, InterruptedException {
        String uri = NO_LOCK.equalsIgnoreCase(backend) ? null : backend;
        Path workDir = dir != null ? dir : Files.createTempDirectory("kanuki-torture-");
        PrintWriter err = spec.commandLine().getErr();
        // Ctrl-C or a kill ends the JVM without running the finally below: clean up there too.
        Thread cleanup = new Thread(() -> {
            stopWorkers();
            deleteTree(workDir);
        }, "kanuki-torture-cleanup");
        if (dir == null) {
            Runtime.getRuntime().addShutdownHook(cleanup);
        }
        try {
            TortureOptions options = new TortureOptions(uri, lockName, processes, iterations, workDir, hold,
                    acquireTimeout);
            warnWhenInProcessOnly(uri, err);
            TortureResult result = runWithProgress(options);
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                out.println(toJson(options, result));
            } else {
                printTable(out, err, options, result);
            }
            out.flush();
            return result.passed() ? ExitCodes.OK : ExitCodes.TORTURE_FAILED;
        } finally {
            if (dir == null) {
                deleteTree(workDir);
                try {
                    Runtime.getRuntime().removeShutdownHook(cleanup);
                } catch (IllegalStateException shuttingDown) {
                    // the hook runs anyway
                }
            }
        }
    }

    /**
     * Kills the worker JVMs (the torture harness's own hook does too, but shutdown hooks run in
     * no fixed order) and waits for them, so that none writes into the directory being deleted.
     */
    private static void stopWorkers() {
        List<ProcessHandle> workers = ProcessHandle.current().descendants().toList();
        workers.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle worker : workers) {
            try {
                worker.onExit().get(5, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (ExecutionException | TimeoutException e) {
                // gone already, or stuck: delete what can be deleted
            }
        }
    }

    private void warnWhenInProcessOnly(String uri, PrintWriter err) {
        if (uri == null || processes < 2) {
            return;
        }
        try (LockProvider provider = LockProvider.open(uri)) {
            if (!provider.capabilities().crossProcess()) {
                err.println("kanuki: warning: " + uri + " locks only threads of one process; "
                        + processes + " processes cannot exclude each other");
                err.flush();
            }
        }
    }

    private TortureResult runWithProgress(TortureOptions options) throws IOException, InterruptedException {
        boolean showBar = System.console() != null && !json;
        if (!showBar) {
            return Torture.run(options, null);
        }
        long total = (long) options.processes() * options.iterations();
        try (ProgressBar bar = new ProgressBarBuilder()
                .setTaskName("torture")
                .setInitialMax(total)
                .setUpdateIntervalMillis(100)
                .setConsumer(new ConsoleProgressBarConsumer(System.err))
                .build()) {
            LongConsumer progress = bar::stepTo;
            return Torture.run(options, progress);
        }
    }

    private void printTable(PrintWriter out, PrintWriter err, TortureOptions options, TortureResult r) {
        for (String error : r.workerErrors()) {
            err.println("kanuki: " + error.replace("\n", "\n    "));
        }
        err.flush();
        String times = canPrint('\u00d7') ? " \u00d7 " : " x ";
        row(out, "backend", options.locking()
                ? options.backendUri() + "  (lock '" + SafeNames.printable(options.lockName()) + "')"
                : "none (no lock)");
        row(out, "processes", options.processes() + times + options.iterations() + " iterations"
                + (options.holdTime().isZero() ? "" : ", hold " + Durations.format(options.holdTime())));
        row(out, "expected", Long.toString(r.expected()));
        row(out, "actual", r.actual() + (r.workerErrors().isEmpty() ? "" : "  (incomplete: workers failed)"));
        row(out, "lost updates", Long.toString(r.lostUpdates()));
        row(out, "overlaps", Long.toString(r.overlaps()));
        row(out, "fencing violations", options.locking() ? Long.toString(r.fencingViolations()) : "n/a (no lock)");
        row(out, "elapsed", formatNanos(r.elapsed().toNanos()));
        row(out, "throughput", String.format(Locale.ROOT, "%.0f acquisitions/s", r.acquisitionsPerSecond()));
        row(out, "acquire latency", !options.locking() ? "n/a (no lock)"
                : "p50 " + formatNanos(r.p50Nanos()) + "  p99 " + formatNanos(r.p99Nanos())
                        + "  max " + formatNanos(r.maxNanos()));
        out.println(verdict(r));
    }

    private static void row(PrintWriter out, String label, String value) {
        out.printf(Locale.ROOT, "%-20s %s%n", label, value);
    }

    /** @return {@code PASS: no update lost} or {@code FAIL: } and what went wrong */
    static String verdict(TortureResult r) {
        if (r.passed()) {
            return "PASS: no update lost";
        }
        List<String> problems = new ArrayList<>();
        if (!r.workerErrors().isEmpty()) {
            // The counter then says nothing about the lock: the failed workers' increments never ran.
            problems.add(r.workerErrors().size() + " worker error" + (r.workerErrors().size() == 1 ? "" : "s"));
        } else if (r.lostUpdates() > 0) {
            problems.add(r.lostUpdates() + (r.lostUpdates() == 1 ? " update lost" : " updates lost"));
        } else if (r.lostUpdates() < 0) {
            problems.add("counter " + (-r.lostUpdates()) + " above expected (garbled writes)");
        }
        if (r.overlaps() > 0) {
            problems.add(r.overlaps() + (r.overlaps() == 1 ? " overlap" : " overlaps"));
        }
        if (r.fencingViolations() > 0) {
            problems.add(r.fencingViolations() + " fencing violation" + (r.fencingViolations() == 1 ? "" : "s"));
        }
        return "FAIL: " + String.join(", ", problems);
    }

    /** @return e.g. {@code 850ns}, {@code 120µs}, {@code 1.25ms}, {@code 2.50s} */
    static String formatNanos(long nanos) {
        String micro = canPrint('\u00b5') ? "\u00b5s" : "us";
        if (nanos < 1_000) {
            return nanos + "ns";
        }
        if (nanos < 1_000_000) {
            return String.format(Locale.ROOT, nanos < 10_000 ? "%.1f%s" : "%.0f%s", nanos / 1e3, micro);
        }
        if (nanos < 1_000_000_000) {
            return String.format(Locale.ROOT, "%.2fms", nanos / 1e6);
        }
        return String.format(Locale.ROOT, "%.2fs", nanos / 1e9);
    }

    /** Whether standard output can show a character (not under a C/POSIX locale, for example). */
    private static boolean canPrint(char c) {
        String encoding = System.getProperty("sun.stdout.encoding");
        try {
            Charset charset = encoding != null ? Charset.forName(encoding) : Charset.defaultCharset();
            return charset.newEncoder().canEncode(c);
        } catch (RuntimeException e) {
            return false;
        }
    }

    private static String toJson(TortureOptions options, TortureResult r) {
        return new Json()
                .field("backend", options.backendUri())
                .field("lockName", options.lockName())
                .field("processes", options.processes())
                .field("iterations", options.iterations())
                .field("holdNanos", options.holdTime().toNanos())
                .field("expected", r.expected())
                .field("actual", r.actual())
                .field("lostUpdates", r.lostUpdates())
                .field("overlaps", r.overlaps())
                .field("fencingViolations", r.fencingViolations())
                .field("elapsedNanos", r.elapsed().toNanos())
                .field("acquisitionsPerSecond", r.acquisitionsPerSecond())
                .field("p50Nanos", r.p50Nanos())
                .field("p99Nanos", r.p99Nanos())
                .field("maxNanos", r.maxNanos())
                .field("workerErrors", r.workerErrors())
                .field("passed", r.passed())
                .toString();
    }

    /**
     * Deletes the work directory. The command's finally and the shutdown hook can both get here
     * at once (a signal while the run ends): one at a time, and a file that vanished under the
     * walk is no reason to stop it.
     */
    private static void deleteTree(Path root) {
        // A lock, not the class's monitor: the walk is file I/O, during which a virtual thread
        // must not pin its carrier (JDK 21 to 23).
        DELETING.lock();
        try {
            deleteTreeNow(root);
        } finally {
            DELETING.unlock();
        }
    }

    private static void deleteTreeNow(Path root) {
        try {
            Files.walkFileTree(root, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException e) {
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            // A leftover temporary directory is not worth failing the run for.
        }
    }
}
