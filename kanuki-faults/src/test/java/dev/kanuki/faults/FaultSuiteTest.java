package dev.kanuki.faults;

import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.kanuki.LeaseKind;
import dev.kanuki.testkit.EtcdServer;
import dev.kanuki.testkit.MemcachedServer;
import dev.kanuki.testkit.MariaDbServer;
import dev.kanuki.testkit.PostgresServer;
import dev.kanuki.testkit.RedisServer;
import dev.kanuki.testkit.ZooKeeperServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The fault suite: every backend × every fault, with real worker processes and a fenced resource
 * as the referee; prints the table (and writes {@code target/fault-table.md}). An unexpected
 * violation fails the build. Bounded mode (one round) runs with the test suite; for a soak run:
 * {@code mvn -pl kanuki-faults -am verify -Dtest=FaultSuiteTest -Dkanuki.faults.rounds=20
 * -Dsurefire.failIfNoSpecifiedTests=false}.
 */
class FaultSuiteTest {
    private static final int ROUNDS = Integer.getInteger("kanuki.faults.rounds", 1);
    private static final Map<String, Map<String, List<Outcome>>> TABLE = new LinkedHashMap<>();
    private static final List<String> SCENARIOS = List.of("SIGKILL of the holder", "SIGSTOP of the holder past its lease");
    private static Path work;

    /** Every backend in the suite; a new one joins with one line. */
    static List<Target> targets() throws IOException {
        work = Files.createTempDirectory("kanuki-faults-");
        List<Target> targets = new ArrayList<>();
        for (String strategy : List.of("os", "mkdir", "symlink", "rename", "create", "queue")) {
            Path dir = work.resolve("file-" + strategy);
            targets.add(new Target("file:" + strategy,
                    () -> "file:" + dir + "?strategy=" + strategy + "&lease=" + Target.LEASE.toMillis() + "ms",
                    strategy.equals("os") ? LeaseKind.SESSION : LeaseKind.TTL));
        }
        Path sqlite = work.resolve("sqlite");
        targets.add(new Target("sqlite", () -> "sqlite:" + sqlite, LeaseKind.SESSION));
        targets.add(new Target("postgresql", () -> {
            PostgresServer pg = PostgresServer.shared();
            return pg.kanukiUri(pg.createDatabase("faults")) + "&restartGrace=0";
        }, LeaseKind.SESSION));
        targets.add(new Target("mariadb", () -> {
            MariaDbServer db = MariaDbServer.shared();
            return db.kanukiUri(db.createDatabase("faults")) + "&restartGrace=0";
        }, LeaseKind.SESSION));
        targets.add(new Target("redis", () -> RedisServer.shared().kanukiUri() + "?lease=" + Target.LEASE.toMillis() + "ms",
                LeaseKind.TTL));
        targets.add(new Target("etcd", () -> EtcdServer.shared().kanukiUri() + "?lease=" + Target.LEASE.toMillis() + "ms",
                LeaseKind.TTL));
        targets.add(new Target("memcached",
                () -> MemcachedServer.shared().kanukiUri() + "?lease=" + Target.LEASE.toMillis() + "ms", LeaseKind.TTL));
        // A ZooKeeper session expires while its holder is stopped, as a lease does: it counts as ttl here.
        targets.add(new Target("zookeeper",
                () -> ZooKeeperServer.shared().kanukiUri() + "?session=" + Target.LEASE.toMillis() + "ms", LeaseKind.TTL));
        return targets;
    }

    @TestFactory
    Stream<DynamicTest> everyBackendUnderEveryFault() throws IOException {
        List<DynamicTest> tests = new ArrayList<>();
        int[] serial = {0};
        for (Target target : targets()) {
            for (String scenario : SCENARIOS) {
                tests.add(DynamicTest.dynamicTest(target.name() + " / " + scenario, () -> {
                    String uri = target.uri().get();
                    for (int round = 0; round < ROUNDS; round++) {
                        Path dir = Files.createDirectories(work.resolve("run-" + (serial[0]++)));
                        String name = "faults/" + scenario.replace(' ', '-') + "/" + round;
                        Outcome outcome = scenario.startsWith("SIGKILL")
                                ? Scenarios.killedHolder(target, uri, name, dir)
                                : Scenarios.pausedHolder(target, uri, name, dir);
                        TABLE.computeIfAbsent(target.name(), t -> new LinkedHashMap<>())
                                .computeIfAbsent(scenario, s -> new ArrayList<>()).add(outcome);
                        assertNotEquals(Outcome.Verdict.UNEXPECTED, outcome.verdict(),
                                target.name() + " under " + scenario + ": " + outcome.detail()
                                        + " (worker logs in " + dir + ")");
                    }
                }));
            }
        }
        return tests.stream();
    }

    @AfterAll
    static void printTable() throws IOException {
        StringBuilder md = new StringBuilder();
        md.append("| backend | ").append(String.join(" | ", SCENARIOS)).append(" |\n");
        md.append("| --- |").append(" --- |".repeat(SCENARIOS.size())).append('\n');
        TABLE.forEach((target, row) -> {
            md.append("| `").append(target).append("` |");
            for (String scenario : SCENARIOS) {
                md.append(' ').append(cell(row.get(scenario))).append(" |");
            }
            md.append('\n');
        });
        md.append("\nRounds per cell: ").append(ROUNDS).append(". Lease of ttl backends: ")
                .append(Target.LEASE.toSeconds()).append(" s.\n");
        System.out.println("\nkanuki fault table\n" + md);
        Path out = Path.of("target", "fault-table.md");
        Files.createDirectories(out.getParent());
        Files.writeString(out, md.toString());
    }

    private static String cell(List<Outcome> outcomes) {
        if (outcomes == null || outcomes.isEmpty()) {
            return "not run";
        }
        Outcome worst = outcomes.stream().max((a, b) -> a.verdict().compareTo(b.verdict())).orElseThrow();
        long[] times = outcomes.stream().mapToLong(Outcome::recoveryMillis).filter(t -> t >= 0).sorted().toArray();
        String time = times.length == 0 ? "" : ", " + (times.length == 1 ? times[0] + " ms"
                : "median " + times[times.length / 2] + " ms, max " + times[times.length - 1] + " ms");
        return worst.verdict().words + time + (worst.verdict() == Outcome.Verdict.HELD ? "" : ": " + worst.detail());
    }
}
