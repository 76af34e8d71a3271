package dev.kanuki.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.kanuki.testkit.RedisServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two instances of the example application, each a JVM of its own, on one real redis-server
 * (kanuki-testkit), over real HTTP: the kanuki health component, one order per idempotency key
 * (200 and 409 with Retry-After, the lock in {@code /actuator/locks}), the lock meters, the
 * scheduled job run once per tick across both, and a standby taking over from a leader killed
 * with SIGKILL, with a higher epoch. The leader test runs last: it kills an instance.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Tag("servers")
@Tag("slow")
class TwoInstancesOnRedisTest {
    /**
     * The lease: how long a killed leader's lock outlives it on Redis (docs/leader.md: "when the
     * lease runs out"; the default is 30 s). Short, so that the takeover is quick.
     */
    private static final Duration LEASE = Duration.ofSeconds(3);

    private Path dir;

    private RedisServer redis;
    private final List<Instance> instances = new ArrayList<>();
    private Instance a;
    private Instance b;
    private Path ticksFile;
    /** The tick when both instances answered: from then on both run the job. */
    private long bothUpTick;

    @BeforeAll
    void startRedisAndTwoInstances(@TempDir Path dir) throws Exception {
        this.dir = dir;
        redis = RedisServer.start();
        ticksFile = dir.resolve("ticks.log");
        Path runtime = Files.createDirectories(dir.resolve("runtime"));
        List<String> args = new ArrayList<>(Scenarios.commonArgs(ticksFile));
        args.add("--kanuki.uri=" + redis.kanukiUri());
        args.add("--kanuki.lease=" + LEASE.toSeconds() + "s");
        // kanuki.uri is set; the per-user default directory would not be used, but keep it in the test's directory anyway
        Map<String, String> env = Map.of("XDG_RUNTIME_DIR", runtime.toString());
        a = Instance.start(dir, "a", env, args.toArray(String[]::new));
        instances.add(a);
        b = Instance.start(dir, "b", env, args.toArray(String[]::new));
        instances.add(b);
        a.awaitUp();
        b.awaitUp();
        bothUpTick = System.currentTimeMillis() / 1000;
    }

    @AfterAll
    void stopAll() throws Exception {
        try {
            for (Instance i : instances) {
                i.close();
            }
        } finally {
            if (redis != null) {
                redis.close();
            }
        }
    }

    @Test
    @Order(1)
    void theHealthShowsTheRedisStoreUp() throws Exception {
        for (Instance i : List.of(a, b)) {
            JsonNode kanuki = Scenarios.kanukiHealthIsUp(i);
            assertThat(kanuki.toString()).as("details of %s", i).contains("redis://127.0.0.1:" + redis.port());
        }
    }

    @Test
    @Order(2)
    void twoConcurrentOrdersWithOneKeyArePlacedOnceAndRefusedOnce() throws Exception {
        Instance placer = Scenarios.oneOfTwoConcurrentOrdersIsRefused(a, b);
        JsonNode locks = placer.getJson("/actuator/locks");
        assertThat(locks.path("store").asText()).startsWith("redis://127.0.0.1:" + redis.port());
        assertThat(locks.path("leaseKind").asText()).isEqualTo("ttl");
        Scenarios.acquireMetricsShown(a);
        Scenarios.acquireMetricsShown(b);
    }

    @Test
    @Order(3)
    void theScheduledJobRunsOncePerTickAcrossBothInstances() throws Exception {
        Map<Long, List<String>> ticks = Scenarios.onceEveryTick(ticksFile, bothUpTick, 20, a, b);
        System.out.printf("redis: %d ticks, %d missed after both were up; runs by pid: %s%n", ticks.size(),
                Scenarios.gaps(ticks, bothUpTick), byPid(ticks));
    }

    @Test
    @Order(4)
    void whenTheLeaderIsKilledTheOtherInstanceLeadsWithAHigherEpoch() throws Exception {
        Instance[] leader = new Instance[1];
        long[] epoch = {-1};
        await("one leader").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200)).until(() -> {
            List<Instance> leading = new ArrayList<>();
            for (Instance i : List.of(a, b)) {
                JsonNode answer = i.getJson("/leader");
                assertThat(answer.path("pid").asLong()).isEqualTo(i.pid());
                if (answer.path("leader").asBoolean()) {
                    leading.add(i);
                    epoch[0] = answer.path("epoch").asLong();
                }
            }
            if (leading.size() == 1) {
                leader[0] = leading.get(0);
                return true;
            }
            return false;
        });
        Instance standby = leader[0] == a ? b : a;
        long killedAt = System.nanoTime();
        leader[0].kill(); // SIGKILL: its lock stays in Redis until the lease runs out
        long[] newEpoch = {-1};
        await("the standby elected after the leader was killed").atMost(Duration.ofSeconds(90))
                .pollInterval(Duration.ofMillis(100)).until(() -> {
                    JsonNode answer = standby.getJson("/leader");
                    newEpoch[0] = answer.path("epoch").asLong(-1);
                    return answer.path("leader").asBoolean();
                });
        long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
        assertThat(newEpoch[0]).as("the new leader's epoch after %s", epoch[0]).isGreaterThan(epoch[0]);
        // reported, not asserted: on a loaded machine the time is the lease plus whatever the machine adds
        System.out.printf("redis: leader %s (epoch %d) killed; %s leads with epoch %d after %d ms (lease %d ms)%n",
                leader[0], epoch[0], standby, newEpoch[0], tookMs, LEASE.toMillis());
    }

    static Map<String, Long> byPid(Map<Long, List<String>> ticks) {
        Map<String, Long> counts = new java.util.TreeMap<>();
        ticks.values().forEach(pids -> pids.forEach(p -> counts.merge(p, 1L, Long::sum)));
        return counts;
    }
}
