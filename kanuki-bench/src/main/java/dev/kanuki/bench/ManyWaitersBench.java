package dev.kanuki.bench;

import com.sun.management.OperatingSystemMXBean;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.contract.ManyLocksHolder;
import dev.kanuki.testkit.PostgresServer;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Thousands of asynchronous waiters in one JVM: 10,000 on one name, and one on each of 10,000
 * names, all held elsewhere; then everything is released. Reports, per backend and case: the
 * cost of enqueuing one waiter, the heap and threads the waiting adds, the JVM's CPU while they
 * wait, and how long until every waiter is served.
 *
 * <p>Holders: for {@code file:} os another process holds the names; for PostgreSQL another
 * session (one connection holding the advisory keys, as a program would by hand: 10,000
 * kanuki holders would need 10,000 connections); for {@code mem:} another provider in this JVM
 * (nothing outside a JVM can hold a {@code mem:} lock).
 *
 * <pre>
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.ManyWaitersBench [mem|file|postgres]… [--waiters N]
 * </pre>
 */
public final class ManyWaitersBench {
    private static final Duration WAIT = Duration.ofMinutes(10);
    private static final long SETTLE_MS = 10_000;
    private static final long CPU_WINDOW_MS = 10_000;

    /** Threads alive before any case: engine threads that outlive one case count in the next. */
    private static int threadsAtStart;
    private static int kanukiThreadsAtStart;

    /** @return the engine's threads alive now (named kanuki-…) */
    private static int kanukiThreads() {
        int n = 0;
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.getName().startsWith("kanuki-")) {
                n++;
            }
        }
        return n;
    }

    private ManyWaitersBench() {
    }

    /** Something that holds the names elsewhere and lets go on {@link #release()}. */
    private interface Holder extends AutoCloseable {
        void release() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        int n = 10_000;
        List<String> backends = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--waiters")) {
                n = Integer.parseInt(args[++i]);
            } else {
                backends.add(args[i]);
            }
        }
        if (backends.isEmpty()) {
            backends = List.of("mem", "file", "postgres");
        }
        int waiters = n;
        threadsAtStart = ManagementFactory.getThreadMXBean().getThreadCount();
        kanukiThreadsAtStart = kanukiThreads();
        System.out.printf(Locale.ROOT, "%-9s %-10s %8s %10s %9s %9s %9s %9s %s%n", "backend", "case", "waiters",
                "enqueue/us", "heap MiB", "+thr(kan)", "cpu %", "served s", "served");
        for (String backend : backends) {
            switch (backend) {
                case "mem" -> {
                    String uri = "mem:bench-" + System.nanoTime();
                    run("mem", "one name", uri, n, true, () -> inJvmHolder(uri, "one", 1));
                    run("mem", "many names", uri, n, false, () -> inJvmHolder(uri, "many", waiters));
                }
                case "file" -> {
                    Path dir = BenchFiles.newTempDir("kanuki-many-waiters");
                    String uri = "file:" + dir.resolve("locks") + "?strategy=os";
                    run("file os", "one name", uri, n, true, () -> processHolder(uri, "one", 1));
                    run("file os", "many names", uri, n, false, () -> processHolder(uri, "many", waiters));
                    BenchFiles.deleteQuietly(dir);
                }
                case "postgres" -> {
                    try (PostgresServer pg = PostgresServer.start()) {
                        String db = pg.createDatabase("many_waiters");
                        String uri = pg.kanukiUri(db) + "&restartGrace=0";
                        run("postgres", "one name", uri, n, true, () -> sessionHolder(pg, db, uri, "one", 1));
                        run("postgres", "many names", uri, n, false, () -> sessionHolder(pg, db, uri, "many", waiters));
                    }
                }
                default -> throw new IllegalArgumentException("mem, file or postgres, not " + backend);
            }
        }
    }

    private interface HolderFactory {
        Holder start() throws Exception;
    }

    private static void run(String backend, String label, String uri, int n, boolean oneName, HolderFactory holders)
            throws Exception {
        String prefix = oneName ? "one" : "many";
        try (Holder holder = holders.start(); LockProvider provider = LockProvider.open(uri)) {
            MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
            ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            System.gc();
            long heapBefore = memory.getHeapMemoryUsage().getUsed();
            int threadsBefore = threadsAtStart;
            threads.resetPeakThreadCount();

            List<CompletableFuture<Void>> futures = new ArrayList<>(n);
            AtomicInteger served = new AtomicInteger();
            long t0 = System.nanoTime();
            for (int i = 0; i < n; i++) {
                futures.add(provider.lock(oneName ? prefix + 0 : prefix + i).acquireAsync(WAIT).thenAccept(h -> {
                    served.incrementAndGet();
                    h.close();
                }));
            }
            long enqueueNanos = System.nanoTime() - t0;
            Thread.sleep(SETTLE_MS);
            long cpu0 = os.getProcessCpuTime();
            long w0 = System.nanoTime();
            int kanukiThreads = 0;
            while (System.nanoTime() - w0 < TimeUnit.MILLISECONDS.toNanos(CPU_WINDOW_MS)) {
                kanukiThreads = Math.max(kanukiThreads, kanukiThreads() - kanukiThreadsAtStart);
                Thread.sleep(100);
            }
            double cpuPercent = 100.0 * (os.getProcessCpuTime() - cpu0) / (System.nanoTime() - w0);
            System.gc();
            double heapMiB = (memory.getHeapMemoryUsage().getUsed() - heapBefore) / 1048576.0;
            int added = threads.getPeakThreadCount() - threadsBefore;
            String addedText = added + " (" + kanukiThreads + ")";
            int early = served.get();

            long r0 = System.nanoTime();
            holder.release();
            CompletableFuture.allOf(futures.toArray(CompletableFuture[]::new)).get(WAIT.toMinutes(), TimeUnit.MINUTES);
            double servedSeconds = (System.nanoTime() - r0) / 1e9;
            System.out.printf(Locale.ROOT, "%-9s %-10s %8d %10.1f %9.1f %9s %9.2f %9.2f %d/%d%s%n", backend, label, n,
                    enqueueNanos / 1e3 / n, heapMiB, addedText, cpuPercent, servedSeconds, served.get(), n,
                    early > 0 ? " (" + early + " before release!)" : "");
        }
    }

    // ---------------------------------------------------------------- holders

    private static Holder inJvmHolder(String uri, String prefix, int count) {
        LockProvider other = LockProvider.open(uri);
        List<LockHandle> held = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            held.add(other.lock(prefix + i).acquire(Duration.ofSeconds(10)));
        }
        return new Holder() {
            @Override
            public void release() {
                held.forEach(LockHandle::close);
            }

            @Override
            public void close() {
                other.close();
            }
        };
    }

    /**
     * The holder process writes its errors to this JVM's stderr stream, inherited: handing it
     * {@code /dev/stderr} by path made it reopen (and, for a file, truncate) this JVM's own output.
     */
    private static Holder processHolder(String uri, String prefix, int count) throws IOException {
        ManyLocksHolder holder = ManyLocksHolder.startInheritingStderr(uri, prefix, count);
        return new Holder() {
            @Override
            public void release() throws IOException {
                holder.releaseAll();
            }

            @Override
            public void close() throws Exception {
                holder.close();
            }
        };
    }

    /**
     * Another PostgreSQL session holding the names' advisory keys: kanuki registers each name
     * once (so its key is in the table), then one raw connection takes every key.
     */
    private static Holder sessionHolder(PostgresServer pg, String db, String uri, String prefix, int count)
            throws Exception {
        try (LockProvider register = LockProvider.open(uri)) {
            for (int i = 0; i < count; i++) {
                register.lock(prefix + i).acquire(Duration.ofSeconds(10)).close();
            }
        }
        Connection c = pg.connect(db);
        List<long[]> keys = new ArrayList<>(count);
        try (Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT lock_key FROM kanuki_locks WHERE name LIKE '" + prefix + "%'")) {
            while (r.next()) {
                long k = r.getLong(1);
                keys.add(new long[] {k >>> 32, k & 0xFFFFFFFFL});
            }
        }
        if (keys.size() != count) {
            throw new IllegalStateException("expected " + count + " registered names, found " + keys.size());
        }
        try (PreparedStatement lock = c.prepareStatement("SELECT pg_advisory_lock(?, ?)")) {
            for (long[] k : keys) {
                lock.setInt(1, (int) k[0]);
                lock.setInt(2, (int) k[1]);
                lock.execute();
            }
        }
        return new Holder() {
            @Override
            public void release() throws Exception {
                try (Statement s = c.createStatement()) {
                    s.execute("SELECT pg_advisory_unlock_all()");
                }
            }

            @Override
            public void close() throws Exception {
                c.close();
            }
        };
    }
}
