package dev.kanuki.faults;

import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.kanuki.LeaseKind;
import dev.kanuki.testkit.EtcdCluster;
import dev.kanuki.testkit.EtcdServer;
import dev.kanuki.testkit.MariaDbServer;
import dev.kanuki.testkit.MemcachedServer;
import dev.kanuki.testkit.PostgresServer;
import dev.kanuki.testkit.RedisServer;
import dev.kanuki.testkit.ZooKeeperEnsemble;
import dev.kanuki.testkit.ZooKeeperServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestFactory;

/**
 * The fault suite: every backend × every fault, with real worker processes, a referee log of
 * their critical sections and a fenced counter; prints the table (and writes
 * {@code target/fault-table.md}). An unexpected violation fails the build. The targets run in
 * parallel lanes (one lane per backend: its faults one after the other, since some restart its
 * server). Bounded mode (one round) runs with the test suite; a soak run:
 * {@code mvn -pl kanuki-faults -am verify -Dtest=FaultSuiteTest -Dkanuki.faults.rounds=20
 * -Dsurefire.failIfNoSpecifiedTests=false}; {@code -Dkanuki.faults.lanes=N} sets the parallelism,
 * {@code -Dkanuki.faults.only=redis,file:os} runs some targets only, {@code -Dkanuki.faults.faults=SIGSTOPped}
 * the faults whose name contains one of the given words only.
 */
@Tag("servers")
@Tag("faults")
class FaultSuiteTest {
    static final String KILL = "SIGKILL of the holder";
    static final String KILL_ACQUIRING = "SIGKILL mid-acquisition";
    static final String PAUSE = "SIGSTOP of the holder past its lease";
    static final String PAUSE_ACQUIRE = "holder SIGSTOPped as it is granted the lock";
    static final String PAUSE_RENEW = "holder SIGSTOPped at its renewal / session check";
    static final String PAUSE_RELEASE = "holder SIGSTOPped at its release";
    static final String CLOSE_HOLDING = "provider closed while holding, its threads waiting";
    static final String CLOSE_WAITING = "provider closed while its threads wait";
    static final String INTERRUPT = "waiters interrupted / cancelled";
    static final String FROZEN_ACQUIRE = "SIGSTOP inside acquire (test hook)";
    static final String FROZEN_RENEW = "SIGSTOP inside renew (test hook)";
    static final String FROZEN_RELEASE = "SIGSTOP inside release (test hook)";
    static final String RESTART = "server crash + restart";
    static final String SERVER_PAUSE = "server SIGSTOP past a lease, SIGCONT";
    static final String STALL = "holder's connection stalled (proxy)";
    static final String RESET = "holder's connection reset (proxy)";
    static final String EVICTION = "eviction";
    static final String CHANNEL = "another channel closed in the holder's JVM";
    static final String CORRUPT = "corrupted artefacts";
    static final String LINKS = "planted symlink / hard link";
    static final String PERMISSION = "permission denied";
    static final String DISK_FULL = "disk full (tmpfs)";
    static final String CLOCK = "clock step (faked)";
    static final String NAMES = "hostile names";
    static final String LEADER_RELEASE = "leader killed during release (3-member ensemble)";

    private static final int ROUNDS = Integer.getInteger("kanuki.faults.rounds", 1);
    private static final int LANES = Integer.getInteger("kanuki.faults.lanes", 4);
    private static final List<String> FAULTS = System.getProperty("kanuki.faults.faults", "").isBlank() ? List.of()
            : List.of(System.getProperty("kanuki.faults.faults").split(","));
    private static final Map<String, Map<String, List<Outcome>>> TABLE = new ConcurrentHashMap<>();
    private static final List<Column> COLUMNS = new ArrayList<>();
    private static final List<Target> TARGETS = new ArrayList<>();
    private static final long STARTED = System.nanoTime();
    private static Path work;

    /** One fault: where it applies, why not elsewhere, and its body. */
    record Column(String name, Predicate<Target> applies, String notApplicable, Runner runner) {
    }

    /** Runs one cell in its own directory. */
    @FunctionalInterface
    interface Runner {
        Outcome run(Target target, Path dir, String lockName) throws Exception;
    }

    private static Runner trial(Scenarios.Body body) {
        return (target, dir, name) -> {
            Path locks = Files.createDirectories(dir.resolve("locks"));
            try (Trial t = new Trial(target, target.uri(locks), name, dir)) {
                return body.run(t);
            } catch (Trial.Failure e) {
                return Outcome.unexpected(-1, e.getMessage());
            }
        };
    }

    static {
        Predicate<Target> all = t -> true;
        Predicate<Target> servers = t -> !t.isFiles();
        Predicate<Target> files = Target::isFiles;
        COLUMNS.add(new Column(KILL, all, "", trial(Scenarios::killedHolder)));
        COLUMNS.add(new Column(KILL_ACQUIRING, all, "", trial(Scenarios::killedWhileAcquiring)));
        COLUMNS.add(new Column(PAUSE, all, "", trial(Scenarios::pausedHolder)));
        // Frozen at the engine's call of each step (a grant just made, a renewal or check about to
        // be sent, a release about to be sent); the file ttl strategies are frozen inside each step below.
        Predicate<Target> engineSteps = t -> !(t.isFileStrategy() && t.ttl());
        String insideSteps = "frozen inside each step instead: the 'SIGSTOP inside' rows";
        COLUMNS.add(new Column(PAUSE_ACQUIRE, engineSteps, insideSteps, trial(PhaseScenarios::pausedAtAcquire)));
        COLUMNS.add(new Column(PAUSE_RENEW, engineSteps, insideSteps, trial(PhaseScenarios::pausedAtRenew)));
        COLUMNS.add(new Column(PAUSE_RELEASE, engineSteps, insideSteps, trial(PhaseScenarios::pausedAtRelease)));
        COLUMNS.add(new Column(CLOSE_HOLDING, all, "", trial(LifecycleScenarios::closedWhileHolding)));
        COLUMNS.add(new Column(CLOSE_WAITING, all, "", trial(LifecycleScenarios::closedWhileWaiting)));
        COLUMNS.add(new Column(INTERRUPT, all, "", trial(LifecycleScenarios::interruptedWaiters)));
        // kanuki-file's test hook freezes a file lock inside one of its steps. Elsewhere renewal is
        // the engine's call to a server (or the kernel's session): no step of the client holds
        // anything another process waits for, so a SIGSTOP at a random moment (PAUSE) covers it.
        Predicate<Target> fileTtl = t -> t.isFileStrategy() && t.ttl();
        String noSteps = "no file step holds anything others wait for: the server's (or kernel's) lease; see the SIGSTOP column";
        COLUMNS.add(new Column(FROZEN_ACQUIRE, fileTtl, noSteps, trial(t -> Scenarios.frozenInside(t, "acquire", FROZEN_ACQUIRE))));
        COLUMNS.add(new Column(FROZEN_RENEW, fileTtl, noSteps, trial(t -> Scenarios.frozenInside(t, "renew", FROZEN_RENEW))));
        COLUMNS.add(new Column(FROZEN_RELEASE, fileTtl, noSteps, trial(t -> Scenarios.frozenInside(t, "release", FROZEN_RELEASE))));
        COLUMNS.add(new Column(RESTART, servers, "no server", trial(Scenarios::serverRestart)));
        COLUMNS.add(new Column(SERVER_PAUSE, servers, "no server", trial(Scenarios::serverPaused)));
        COLUMNS.add(new Column(STALL, servers, "no connection", trial(Scenarios::proxyStall)));
        COLUMNS.add(new Column(RESET, servers, "no connection", trial(Scenarios::proxyReset)));
        COLUMNS.add(new Column(EVICTION, t -> t.name().equals("redis") || t.name().equals("memcached"),
                "nothing evicts", FaultSuiteTest::eviction));
        COLUMNS.add(new Column(CHANNEL, files, "no lock file", trial(FileFaults::secondChannel)));
        COLUMNS.add(new Column(CORRUPT, files, "no artefacts on disk", (t, d, n) -> FileFaults.corrupted(t, n, d)));
        COLUMNS.add(new Column(LINKS, files, "no artefacts on disk", (t, d, n) -> FileFaults.plantedLinks(t, n, d)));
        COLUMNS.add(new Column(PERMISSION, files, "no artefacts on disk", trial(FileFaults::permissionDenied)));
        COLUMNS.add(new Column(DISK_FULL, files, "no artefacts on disk", (t, d, n) -> FileFaults.diskFull(t, n, d)));
        COLUMNS.add(new Column(CLOCK, t -> t.isFileStrategy() && t.ttl(),
                "session lease, or the lease runs on the server's clock: not fakeable from a test",
                trial(FileFaults::clockStep)));
        COLUMNS.add(new Column(NAMES, all, "", (t, d, n) -> FileFaults.hostileNames(t, d)));
        COLUMNS.add(new Column(LEADER_RELEASE, t -> t.name().equals("zookeeper") || t.name().equals("etcd"),
                "no leader: a single server", FaultSuiteTest::leaderKilledDuringRelease));
    }

    /** Every backend in the suite; a new one joins with a few lines. */
    static List<Target> targets() {
        String lease = "lease=" + Target.LEASE.toMillis() + "ms";
        List<Target> targets = new ArrayList<>();
        String paused = "its page: a holder paused past its lease loses the lock while it still believes it holds it; "
                + "it is told at its next renewal, and its fenced write is refused";
        for (String strategy : List.of("os", "mkdir", "symlink", "rename", "create", "queue")) {
            boolean os = strategy.equals("os");
            Target t = Target.files("file:" + strategy, os ? LeaseKind.SESSION : LeaseKind.TTL,
                    os ? Duration.ZERO : Target.LEASE, // ttl: a dead owner on this host is stale at once, else after the lease
                    dir -> "file:" + dir + "?strategy=" + strategy + "&" + lease);
            if (os) {
                t.documents(CHANNEL, "file.md, 'os and descriptors': closing any descriptor of the lock file drops the "
                        + "process's POSIX lock; other code in the process must not open kanuki's lock files");
            } else {
                t.documents(PAUSE, "file.md, 'Process pauses longer than the lease': " + paused)
                        .documents(FROZEN_RENEW, "file.md, 'A process frozen at any step': " + paused)
                        .documents(CLOCK, "file.md, 'Clocks': leases are wall-clock times in the record; a waiter "
                                + "whose clock is ahead by more than the lease left breaks a live lock");
            }
            targets.add(t);
        }
        String sqlReset = "sql.md, 'A lock taken away behind its holder': the server ends the reset session "
                + "and frees the lock at once; the holder's lost() completes within about a second";
        targets.add(Target.files("sqlite", LeaseKind.SESSION, Duration.ZERO, dir -> "sqlite:" + dir)
                .documents(CHANNEL, "sql.md, 'SQLite and descriptors': the lock is SQLite's POSIX lock on the "
                        + "database file; closing any descriptor of it in the holder's process drops it"));
        targets.add(Target.server("postgresql", LeaseKind.SESSION, Duration.ZERO, PostgresServer::shared,
                pg -> pg.kanukiUri(pg.createDatabase("faults")))
                .documents(RESET, sqlReset));
        targets.add(Target.server("mariadb", LeaseKind.SESSION, Duration.ZERO, MariaDbServer::shared,
                db -> db.kanukiUri(db.createDatabase("faults")))
                .documents(RESET, sqlReset));
        targets.add(Target.server("redis", LeaseKind.TTL, Target.LEASE, RedisServer::shared, r -> r.kanukiUri() + "?" + lease)
                .documents(PAUSE, "redis.md: " + paused)
                .documents(RESTART, "redis.md: a restart without persistence forgets every lock; holders learn it "
                        + "at their next renewal; tokens continue above the old ones, so the old holder's write is refused")
                .documents(EVICTION, "redis.md: a key evicted under maxmemory disappears like a deletion; "
                        + "use maxmemory-policy noeviction"));
        targets.add(Target.server("etcd", LeaseKind.TTL, Target.LEASE.plusSeconds(1), EtcdServer::shared,
                e -> e.kanukiUri() + "?" + lease)
                .documents(PAUSE, "etcd.md: " + paused));
        targets.add(Target.server("memcached", LeaseKind.TTL, Target.LEASE.plusSeconds(3), MemcachedServer::shared,
                m -> m.kanukiUri() + "?" + lease) // the item lives the lease rounded up to whole seconds, plus two
                .documents(PAUSE, "memcached.md: " + paused)
                .documents(RESTART, "memcached.md: memcached keeps nothing: a restart forgets every lock; holders "
                        + "learn it at their next renewal; tokens continue above the old ones (clock floor)")
                .documents(EVICTION, "memcached.md: mutual exclusion holds 'as long as memcached keeps the item'; "
                        + "an evicted lock is reported lost at the holder's next renewal"));
        // A ZooKeeper session expires while its holder is stopped, as a lease does: it counts as ttl here.
        targets.add(Target.server("zookeeper", LeaseKind.TTL, Target.LEASE.plusSeconds(1), ZooKeeperServer::shared,
                z -> z.kanukiUri() + "?session=" + Target.LEASE.toMillis() + "ms")
                .documents(PAUSE, "zookeeper.md: a stopped client's session expires; " + paused));
        String only = System.getProperty("kanuki.faults.only", "");
        if (!only.isBlank()) {
            List<String> wanted = List.of(only.split(","));
            targets.removeIf(t -> !wanted.contains(t.name()));
        }
        return targets;
    }

    private static Outcome eviction(Target target, Path dir, String name) throws Exception {
        Path locks = Files.createDirectories(dir.resolve("locks"));
        String lease = "?lease=" + Target.LEASE.toMillis() + "ms";
        if (target.name().equals("memcached")) {
            try (MemcachedServer tiny = MemcachedServer.start(2, false);
                 Trial t = new Trial(target, tiny.kanukiUri() + lease, name, dir)) {
                return Scenarios.evicted(t, () -> Fillers.memcached(tiny.host(), tiny.port()));
            }
        }
        try (RedisServer redis = RedisServer.start(); Trial t = new Trial(target, redis.kanukiUri() + lease, name, dir)) {
            return Scenarios.evicted(t, () -> Fillers.redis(redis.host(), redis.port()));
        } finally {
            FileFaults.deleteRecursively(locks);
        }
    }

    /**
     * A three-member ensemble of the target's kind, started for this cell (the suite's targets
     * are single servers): the holder releases right after the leader's SIGKILL.
     */
    private static Outcome leaderKilledDuringRelease(Target target, Path dir, String name) throws Exception {
        if (target.name().equals("zookeeper")) {
            // a session longer than the suite's 2 s lease: it must survive the election, so that
            // the node goes by the release, not by the session's expiry
            try (ZooKeeperEnsemble zk = ZooKeeperEnsemble.start();
                 Trial t = new Trial(target, zk.kanukiUri() + "?session=4000ms", name, dir)) {
                return Scenarios.leaderKilledDuringRelease(t, () -> zk.leader(Duration.ofSeconds(60)));
            }
        }
        // the worker holds nothing else, so its lease is not renewed after the release and would
        // free the key within the lease even without it: this cell checks the takeover and that
        // there are never two holders; EtcdFailoverTest keeps the lease alive to check the release
        try (EtcdCluster etcd = EtcdCluster.start();
             Trial t = new Trial(target, etcd.kanukiUri() + "?lease=" + Target.LEASE.toMillis() + "ms", name, dir)) {
            return Scenarios.leaderKilledDuringRelease(t, () -> etcd.leader(Duration.ofSeconds(60)));
        }
    }

    @TestFactory
    Stream<DynamicTest> everyBackendUnderEveryFault() throws IOException {
        work = Files.createTempDirectory("kanuki-faults-");
        TARGETS.addAll(targets());
        ExecutorService lanes = Executors.newFixedThreadPool(LANES, r -> {
            Thread t = new Thread(r, "kanuki-faults-lane");
            t.setDaemon(true);
            return t;
        });
        AtomicInteger serial = new AtomicInteger();
        Map<String, CompletableFuture<Void>> done = new LinkedHashMap<>();
        // the slowest lanes first: servers that take long to start and have the most faults
        List<Target> order = new ArrayList<>(TARGETS);
        order.sort((a, b) -> Boolean.compare(a.isFiles(), b.isFiles()));
        for (Target target : order) {
            done.put(target.name(), CompletableFuture.runAsync(() -> runLane(target, serial), lanes));
        }
        List<DynamicTest> tests = new ArrayList<>();
        for (Target target : TARGETS) {
            tests.add(DynamicTest.dynamicTest(target.name(), () -> {
                done.get(target.name()).get(30, TimeUnit.MINUTES);
                for (Column column : COLUMNS) {
                    for (Outcome outcome : TABLE.get(target.name()).getOrDefault(column.name(), List.of())) {
                        assertNotEquals(Outcome.Verdict.UNEXPECTED, outcome.verdict(),
                                target.name() + " under " + column.name() + ": " + outcome.detail() + " (logs under " + work + ")");
                    }
                }
            }));
        }
        return tests.stream().onClose(lanes::shutdown);
    }

    private static void runLane(Target target, AtomicInteger serial) {
        Map<String, List<Outcome>> row = TABLE.computeIfAbsent(target.name(), n -> new ConcurrentHashMap<>());
        for (Column column : COLUMNS) {
            List<Outcome> outcomes = row.computeIfAbsent(column.name(), c -> new ArrayList<>());
            if (!column.applies().test(target)) {
                outcomes.add(Outcome.notApplicable(column.notApplicable()));
                continue;
            }
            if (!FAULTS.isEmpty() && FAULTS.stream().noneMatch(column.name()::contains)) {
                outcomes.add(Outcome.notApplicable("not selected (-Dkanuki.faults.faults)"));
                continue;
            }
            for (int round = 0; round < ROUNDS; round++) {
                Path dir = work.resolve(target.name().replace(':', '-') + "-" + serial.incrementAndGet());
                String lock = "faults/" + column.name().replaceAll("[^a-zA-Z]+", "-") + "/" + round;
                long start = System.nanoTime();
                Outcome outcome;
                try {
                    outcome = null;
                    for (int attempt = 0; outcome == null; attempt++) {
                        Path attemptDir = Files.createDirectories(attempt == 0 ? dir : dir.resolveSibling(dir.getFileName() + "-retry" + attempt));
                        try {
                            outcome = column.runner().run(target, attemptDir, lock + (attempt == 0 ? "" : "-retry" + attempt));
                        } catch (Trial.Retry retry) {
                            if (attempt == 2) {
                                outcome = Outcome.unexpected(-1, "three attempts spoiled: " + retry.getMessage());
                            }
                            System.out.printf("[faults] %s %s: retrying: %s%n", target.name(), column.name(), retry.getMessage());
                        }
                    }
                } catch (Exception | AssertionError e) {
                    outcome = Outcome.unexpected(-1, "the scenario failed: " + e);
                }
                outcomes.add(outcome);
                System.out.printf("[faults %4ds] %-12s %-45s %s (%d ms): %s%n", (System.nanoTime() - STARTED) / 1_000_000_000,
                        target.name(), column.name(), outcome.verdict().words, (System.nanoTime() - start) / 1_000_000,
                        outcome.detail());
            }
        }
    }

    @AfterAll
    static void printTable() throws IOException {
        StringBuilder md = new StringBuilder();
        List<String> notes = new ArrayList<>();
        md.append("| fault |");
        TARGETS.forEach(t -> md.append(" `").append(t.name()).append("` |"));
        md.append('\n').append("| --- |").append(" --- |".repeat(TARGETS.size())).append('\n');
        int[] counts = new int[Outcome.Verdict.values().length];
        for (Column column : COLUMNS) {
            md.append("| ").append(column.name()).append(" |");
            for (Target target : TARGETS) {
                List<Outcome> outcomes = TABLE.getOrDefault(target.name(), Map.of()).get(column.name());
                md.append(' ').append(cell(outcomes, target.name() + " × " + column.name(), notes, counts)).append(" |");
            }
            md.append('\n');
        }
        md.append("\nCells held / violated as documented / VIOLATED UNEXPECTEDLY: ")
                .append(counts[Outcome.Verdict.HELD.ordinal()]).append(" / ")
                .append(counts[Outcome.Verdict.DOCUMENTED.ordinal()]).append(" / ")
                .append(counts[Outcome.Verdict.UNEXPECTED.ordinal()]).append(" (n/a: ")
                .append(counts[Outcome.Verdict.NOT_APPLICABLE.ordinal()]).append("). Rounds per cell: ").append(ROUNDS)
                .append(". ttl lease: ").append(Target.LEASE.toMillis()).append(" ms. Suite time: ")
                .append((System.nanoTime() - STARTED) / 1_000_000_000).append(" s.\n\n");
        notes.forEach(n -> md.append(n).append('\n'));
        System.out.println("\nkanuki fault table\n" + md);
        Path out = Path.of("target", "fault-table.md");
        Files.createDirectories(out.getParent());
        Files.writeString(out, md.toString());
        if (counts[Outcome.Verdict.UNEXPECTED.ordinal()] == 0 && work != null) {
            FileFaults.deleteRecursively(work); // kept when something broke: the worker logs are there
        }
    }

    private static String cell(List<Outcome> outcomes, String where, List<String> notes, int[] counts) {
        if (outcomes == null || outcomes.isEmpty()) {
            return "not run";
        }
        Outcome worst = outcomes.stream().max((a, b) -> a.verdict().compareTo(b.verdict())).orElseThrow();
        counts[worst.verdict().ordinal()]++;
        if (worst.verdict() == Outcome.Verdict.NOT_APPLICABLE) {
            return "n/a";
        }
        long[] times = outcomes.stream().mapToLong(Outcome::recoveryMillis).filter(t -> t >= 0).sorted().toArray();
        String time = times.length == 0 ? "" : ", " + (times.length == 1 ? times[0] + " ms"
                : "median " + times[times.length / 2] + " ms, max " + times[times.length - 1] + " ms");
        String note = "N" + (notes.size() + 1);
        notes.add("- " + note + " (" + where + ", " + worst.verdict().words + "): "
                + FileFaults.shorten(worst.detail().replace(work.toString(), "WORK"), 600));
        return (worst.verdict() == Outcome.Verdict.HELD ? "held" : worst.verdict() == Outcome.Verdict.DOCUMENTED
                ? "**documented**" : "**UNEXPECTED**") + time + " [" + note + "]";
    }
}
