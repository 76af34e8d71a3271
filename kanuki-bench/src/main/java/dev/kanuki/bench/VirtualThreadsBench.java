package dev.kanuki.bench;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.PostgresServer;
import dev.kanuki.testkit.RedisServer;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordedFrame;
import jdk.jfr.consumer.RecordingFile;

/**
 * 10,000 virtual threads (Java 21 or later) each acquire and release one lock, per backend:
 * every fourth thread one of four shared names (held 1 ms, so that the others wait for it), the
 * rest a name of their own. All threads start together. A JFR recording of
 * {@code jdk.VirtualThreadPinned} with threshold 0 ms (every pinned park, however short) runs
 * meanwhile; an event is counted as kanuki's when a frame of its stack is in kanuki's library
 * code ({@code dev.kanuki} outside the benchmarks and the test kit). A warm-up with a tenth of
 * the threads (on other names) runs first, recorded apart: the first threads through a path
 * load and initialize its classes, and a virtual thread waiting for that is pinned whatever the
 * code (the VM's frames are on its stack).
 *
 * <p>Reports per backend: threads served (acquired, checked alone on a shared name, released),
 * wall time, pinned events in all and kanuki's, and the load average. PostgreSQL and Redis run on
 * servers the test kit starts. A held PostgreSQL lock is a session, so at most
 * {@value #POSTGRES_IN_FLIGHT} acquisitions run at once there (the test server allows 300
 * connections); every thread still waits for its turn on a virtual thread.
 *
 * <pre>
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.VirtualThreadsBench [mem|file|sqlite|postgres|redis]… [--threads N]
 * </pre>
 */
public final class VirtualThreadsBench {
    private static final int SHARED_NAMES = 4;
    private static final Duration WAIT = Duration.ofMinutes(5);
    private static final int POSTGRES_IN_FLIGHT = 200;
    /** How many stacks of kanuki's pinned events to print per backend. */
    private static final int STACKS_SHOWN = 3;

    private VirtualThreadsBench() {
    }

    /** What one run of the threads found. */
    private record Phase(int threads, int served, double seconds, int pinned, int pinnedByKanuki, List<String> failures,
                         List<String> kanukiStacks) {
    }

    /** What one backend's runs found: a warm-up, then the measured run, each recorded. */
    private record Result(String backend, Phase warmUp, Phase run, double load) {
    }

    public static void main(String[] args) throws Exception {
        int threads = 10_000;
        List<String> backends = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--threads")) {
                threads = Integer.parseInt(args[++i]);
            } else {
                backends.add(args[i]);
            }
        }
        if (backends.isEmpty()) {
            backends = List.of("mem", "file", "sqlite", "postgres", "redis");
        }
        if (Runtime.version().feature() < 21) {
            System.err.println("VirtualThreadsBench needs Java 21 or later (virtual threads); this is Java "
                    + Runtime.version());
            System.exit(2);
        }
        System.out.printf(Locale.ROOT, "Java %s, %d CPUs; %d virtual threads per backend, every %dth on one of %d"
                        + " shared names; JFR jdk.VirtualThreadPinned threshold 0 ms%n", Runtime.version(),
                Runtime.getRuntime().availableProcessors(), threads, SHARED_NAMES, SHARED_NAMES);
        List<Result> results = new ArrayList<>();
        Path work = BenchFiles.newTempDir("kanuki-vt-bench");
        try {
            for (String backend : backends) {
                results.add(switch (backend) {
                    case "mem" -> run("mem", "mem:vt-bench-" + System.nanoTime(), threads, threads, work);
                    case "file" -> run("file", "file:" + work.resolve("file-locks"), threads, threads, work);
                    case "sqlite" -> run("sqlite", "sqlite:" + work.resolve("sqlite-locks"), threads, threads, work);
                    case "postgres" -> {
                        try (PostgresServer pg = PostgresServer.start()) {
                            String db = pg.createDatabase("vt_bench");
                            yield run("postgres", pg.kanukiUri(db) + "&restartGrace=0", threads, POSTGRES_IN_FLIGHT, work);
                        }
                    }
                    case "redis" -> {
                        try (RedisServer redis = RedisServer.start()) {
                            yield run("redis", redis.kanukiUri(), threads, threads, work);
                        }
                    }
                    default -> throw new IllegalArgumentException("mem, file, sqlite, postgres or redis, not " + backend);
                });
            }
        } finally {
            BenchFiles.deleteQuietly(work);
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "%-9s %8s %8s %9s %8s %8s %16s %6s%n", "backend", "threads", "served", "wall s",
                "pinned", "kanuki", "warm-up pinned/k", "load");
        for (Result r : results) {
            System.out.printf(Locale.ROOT, "%-9s %8d %8d %9.2f %8d %8d %16s %6.2f%n", r.backend(), r.run().threads(),
                    r.run().served(), r.run().seconds(), r.run().pinned(), r.run().pinnedByKanuki(),
                    r.warmUp().pinned() + "/" + r.warmUp().pinnedByKanuki(), r.load());
        }
        boolean allGood = true;
        for (Result r : results) {
            Phase run = r.run();
            if (run.served() != run.threads() || r.warmUp().served() != r.warmUp().threads() || run.pinnedByKanuki() > 0) {
                allGood = false;
            }
            for (Phase phase : List.of(r.warmUp(), run)) {
                String what = r.backend() + (phase == run ? "" : " warm-up");
                for (String failure : phase.failures()) {
                    System.out.println(what + ": failed: " + failure);
                }
                for (String stack : phase.kanukiStacks()) {
                    System.out.println(what + ": pinned in kanuki:\n" + stack);
                }
            }
        }
        System.exit(allGood ? 0 : 1);
    }

    private static Result run(String backend, String uri, int threads, int inFlight, Path work) throws Exception {
        try (LockProvider provider = LockProvider.open(uri)) {
            Phase warmUp = phase(provider, "vt-warm-", Math.max(1, threads / 10), inFlight, work.resolve(backend + "-warm.jfr"));
            Phase run = phase(provider, "vt-", threads, inFlight, work.resolve(backend + ".jfr"));
            double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
            System.out.printf(Locale.ROOT, "%-9s served %d/%d in %.2f s; pinned events %d, in kanuki's code %d"
                            + " (warm-up: %d, %d); load %.2f%n", backend, run.served(), threads, run.seconds(), run.pinned(),
                    run.pinnedByKanuki(), warmUp.pinned(), warmUp.pinnedByKanuki(), load);
            return new Result(backend, warmUp, run, load);
        }
    }

    /** Starts {@code threads} virtual threads together, each taking and giving back one lock, under a JFR recording. */
    @SuppressWarnings("try") // the handle is only held
    private static Phase phase(LockProvider provider, String prefix, int threads, int inFlight, Path jfr) throws Exception {
        AtomicInteger served = new AtomicInteger();
        ConcurrentLinkedQueue<String> failures = new ConcurrentLinkedQueue<>();
        AtomicInteger[] inside = new AtomicInteger[SHARED_NAMES];
        for (int i = 0; i < SHARED_NAMES; i++) {
            inside[i] = new AtomicInteger();
        }
        Semaphore admitted = new Semaphore(inFlight);
        double seconds;
        try (Recording recording = new Recording()) {
            recording.enable("jdk.VirtualThreadPinned").withThreshold(Duration.ZERO).withStackTrace();
            recording.start();
            CountDownLatch go = new CountDownLatch(1);
            CountDownLatch done = new CountDownLatch(threads);
            ExecutorService virtualThreads = newVirtualThreadPerTaskExecutor();
            try {
                for (int i = 0; i < threads; i++) {
                    int shared = i % SHARED_NAMES == 0 ? (i / SHARED_NAMES) % SHARED_NAMES : -1;
                    String name = shared >= 0 ? prefix + "shared-" + shared : prefix + "own-" + i;
                    virtualThreads.execute(() -> {
                        try {
                            go.await();
                            admitted.acquire();
                            try (LockHandle h = provider.lock(name).acquire(WAIT)) {
                                if (shared >= 0) {
                                    if (inside[shared].incrementAndGet() != 1) {
                                        throw new IllegalStateException("two holders of " + name + " at once");
                                    }
                                    Thread.sleep(1);
                                    inside[shared].decrementAndGet();
                                }
                            } finally {
                                admitted.release();
                            }
                            served.incrementAndGet();
                        } catch (Exception | Error e) {
                            if (failures.size() < 5) {
                                failures.add(name + ": " + e);
                            }
                        } finally {
                            done.countDown();
                        }
                    });
                }
                long t0 = System.nanoTime();
                go.countDown();
                if (!done.await(WAIT.toMinutes() * 2, TimeUnit.MINUTES)) {
                    failures.add("not all threads ended within " + WAIT.toMinutes() * 2 + " min");
                }
                seconds = (System.nanoTime() - t0) / 1e9;
            } finally {
                virtualThreads.shutdownNow();
            }
            recording.stop();
            recording.dump(jfr);
        }
        int pinned = 0;
        int byKanuki = 0;
        List<String> stacks = new ArrayList<>();
        Map<String, Integer> seen = new LinkedHashMap<>();
        for (RecordedEvent event : RecordingFile.readAllEvents(jfr)) {
            if (!event.getEventType().getName().equals("jdk.VirtualThreadPinned")) {
                continue;
            }
            pinned++;
            String stack = kanukiStack(event);
            if (stack != null) {
                byKanuki++;
                if (seen.merge(stack, 1, Integer::sum) == 1 && stacks.size() < STACKS_SHOWN) {
                    stacks.add(stack);
                }
            }
        }
        return new Phase(threads, served.get(), seconds, pinned, byKanuki, List.copyOf(failures), stacks);
    }

    /** @return the event's stack when a frame of it is kanuki's library code, else null */
    private static String kanukiStack(RecordedEvent event) {
        if (event.getStackTrace() == null) {
            return null;
        }
        boolean ours = false;
        StringBuilder text = new StringBuilder();
        if (event.hasField("pinnedReason")) { // JDK 24 and later say why, and what blocked
            text.append("    (").append(event.getString("pinnedReason")).append("; ")
                    .append(event.getString("blockingOperation")).append(")\n");
        }
        for (RecordedFrame frame : event.getStackTrace().getFrames()) {
            String type = frame.getMethod().getType().getName();
            if (type.startsWith("dev.kanuki.") && !type.startsWith("dev.kanuki.bench.")
                    && !type.startsWith("dev.kanuki.testkit.")) {
                ours = true;
            }
            text.append("    at ").append(type).append('.').append(frame.getMethod().getName()).append(':')
                    .append(frame.getLineNumber()).append('\n');
        }
        return ours ? text.toString() : null;
    }

    /** Java 21's {@code Executors.newVirtualThreadPerTaskExecutor()}, called reflectively: kanuki compiles for 17. */
    private static ExecutorService newVirtualThreadPerTaskExecutor() throws IOException {
        try {
            return (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor").invoke(null);
        } catch (ReflectiveOperationException e) {
            throw new IOException("no virtual threads on Java " + Runtime.version(), e);
        }
    }
}
