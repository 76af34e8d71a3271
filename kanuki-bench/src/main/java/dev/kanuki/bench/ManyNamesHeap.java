package dev.kanuki.bench;

import dev.kanuki.LockProvider;
import dev.kanuki.testkit.EtcdServer;
import dev.kanuki.testkit.MariaDbServer;
import dev.kanuki.testkit.MemcachedServer;
import dev.kanuki.testkit.PostgresServer;
import dev.kanuki.testkit.RedisServer;
import dev.kanuki.testkit.ZooKeeperServer;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Heap kept per distinct lock name: a provider takes and gives back {@code -Dnames} distinct names
 * (100,000 by default) one after the other, and the heap left after a full GC is compared with the
 * heap before, once a few seconds have passed for idle entries to be forgotten. What is measured
 * is the whole JVM (engine, backend, driver), not one table.
 *
 * <p>Run (servers started by kanuki-testkit; a backend whose server is missing is skipped):
 * <pre>
 * mvn -q -DskipTests -pl kanuki-bench -am package
 * java -Xmx1g -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.ManyNamesHeap os queue mkdir symlink rename create sqlite postgres mariadb redis memcached etcd zookeeper mem
 * java -Dnames=20000 -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.ManyNamesHeap etcd zookeeper
 * </pre>
 */
public final class ManyNamesHeap {
    private static final Duration WAIT = Duration.ofSeconds(30);

    private ManyNamesHeap() {
    }

    public static void main(String[] args) throws Exception {
        int names = Integer.getInteger("names", 100_000);
        List<String> kinds = args.length > 0 ? List.of(args)
                : List.of("mem", "os", "queue", "mkdir", "symlink", "rename", "create", "sqlite", "postgres", "mariadb", "redis", "memcached", "etcd", "zookeeper");
        Path temp = Files.createTempDirectory("kanuki-heap");
        List<String> lines = new ArrayList<>();
        lines.add(String.format(Locale.ROOT, "%-10s %9s %12s %12s %12s %8s  %s", "backend", "names", "before (KB)",
                "after (KB)", "B per name", "seconds", "load average (start, end)"));
        for (String kind : kinds) {
            try {
                lines.add(measure(kind, names, temp));
            } catch (RuntimeException e) {
                lines.add(String.format(Locale.ROOT, "%-10s skipped: %s", kind, e.getMessage()));
            }
            System.out.println(lines.get(lines.size() - 1));
        }
        System.out.println();
        lines.forEach(System.out::println);
    }

    private static String measure(String kind, int names, Path temp) throws Exception {
        AutoCloseable server = null;
        try {
            String uri;
            switch (kind) {
                case "mem" -> uri = "mem:heap";
                case "os", "queue", "mkdir", "symlink", "rename", "create" -> uri = "file:" + Files.createDirectories(temp.resolve(kind)) + "?strategy=" + kind;
                case "sqlite" -> uri = "sqlite:" + Files.createDirectories(temp.resolve("sqlite"));
                case "postgres" -> {
                    PostgresServer pg = PostgresServer.start();
                    server = pg;
                    uri = pg.kanukiUri(pg.createDatabase("heap")) + "&restartGrace=0";
                }
                case "mariadb" -> {
                    MariaDbServer db = MariaDbServer.start();
                    server = db;
                    uri = db.kanukiUri(db.createDatabase("heap")) + "&restartGrace=0";
                }
                case "redis" -> {
                    RedisServer redis = RedisServer.start();
                    server = redis;
                    uri = redis.kanukiUri();
                }
                case "memcached" -> {
                    MemcachedServer memcached = MemcachedServer.start();
                    server = memcached;
                    uri = memcached.kanukiUri();
                }
                case "etcd" -> {
                    EtcdServer etcd = EtcdServer.start();
                    server = etcd;
                    uri = etcd.kanukiUri();
                }
                case "zookeeper" -> {
                    ZooKeeperServer zk = ZooKeeperServer.start();
                    server = zk;
                    uri = zk.kanukiUri();
                }
                default -> throw new IllegalArgumentException("unknown backend " + kind);
            }
            try (LockProvider provider = LockProvider.open(uri)) {
                takeAndGiveBack(provider, "warm-", Math.min(names, 5_000));
                long before = retainedAfterIdle();
                String loadAtStart = loadAverage();
                long start = System.nanoTime();
                takeAndGiveBack(provider, "name-", names);
                double seconds = (System.nanoTime() - start) / 1e9;
                String loadAtEnd = loadAverage();
                long after = retainedAfterIdle();
                return String.format(Locale.ROOT, "%-10s %9d %12d %12d %12.1f %8.1f  %s, %s", kind, names, before / 1024,
                        after / 1024, (after - before) / (double) names, seconds, loadAtStart, loadAtEnd);
            }
        } finally {
            if (server != null) {
                server.close();
            }
        }
    }

    private static void takeAndGiveBack(LockProvider provider, String prefix, int names) {
        for (int i = 0; i < names; i++) {
            provider.lock(prefix + i).acquire(WAIT).close();
        }
    }

    /**
     * {@return the one-minute load average, or "?" where the system does not tell it} A figure
     * measured on a busy machine is read beside the load it was measured at.
     */
    private static String loadAverage() {
        double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
        return load < 0 ? "?" : String.format(Locale.ROOT, "%.1f", load);
    }

    /** {@return the heap in use after the backends' idle entries had time to go, and full GCs} */
    private static long retainedAfterIdle() throws InterruptedException {
        Thread.sleep(3_000); // idle entries go after a second or so (the file table's keeper, the engine's gates)
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Thread.sleep(200);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
