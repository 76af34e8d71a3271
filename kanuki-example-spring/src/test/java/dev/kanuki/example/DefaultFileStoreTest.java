package dev.kanuki.example;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
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
 * Two instances of the example application without {@code kanuki.uri}: the starter's default
 * store, {@code file:}, the per-user directory {@code $XDG_RUNTIME_DIR/kanuki} (kanuki-file's
 * {@code LockDirectory}), here pointed at the test's temporary directory through the instances'
 * environment, never the machine's. The job runs once per tick, and of two concurrent orders with
 * one key one is refused.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Tag("slow")
class DefaultFileStoreTest {
    private Path dir;

    private final List<Instance> instances = new ArrayList<>();
    private Instance a;
    private Instance b;
    private Path ticksFile;
    private Path runtime;
    private long bothUpTick;

    @BeforeAll
    void startTwoInstances(@TempDir Path dir) throws Exception {
        this.dir = dir;
        ticksFile = dir.resolve("ticks.log");
        // as a login session's runtime directory: the user's own, closed to others
        runtime = Files.createDirectory(dir.resolve("runtime"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        Map<String, String> env = Map.of("XDG_RUNTIME_DIR", runtime.toString());
        String[] args = Scenarios.commonArgs(ticksFile).toArray(String[]::new);
        a = Instance.start(dir, "file-a", env, args);
        instances.add(a);
        b = Instance.start(dir, "file-b", env, args);
        instances.add(b);
        a.awaitUp();
        b.awaitUp();
        bothUpTick = System.currentTimeMillis() / 1000;
    }

    @AfterAll
    void stopAll() throws Exception {
        for (Instance i : instances) {
            i.close();
        }
    }

    @Test
    @Order(1)
    void theDefaultStoreIsTheRuntimeDirectoryAndUp() throws Exception {
        for (Instance i : List.of(a, b)) {
            Scenarios.kanukiHealthIsUp(i);
        }
        assertThat(runtime.resolve("kanuki")).as("the default lock directory, made by the instances").isDirectory();
        JsonNode locks = a.getJson("/actuator/locks");
        assertThat(locks.path("store").asText()).startsWith("file:");
        assertThat(locks.path("leaseKind").asText()).isEqualTo("session");
    }

    @Test
    @Order(2)
    void twoConcurrentOrdersWithOneKeyArePlacedOnceAndRefusedOnce() throws Exception {
        Scenarios.oneOfTwoConcurrentOrdersIsRefused(a, b);
    }

    @Test
    @Order(3)
    void theScheduledJobRunsOncePerTickAcrossBothInstances() throws Exception {
        Map<Long, List<String>> ticks = Scenarios.onceEveryTick(ticksFile, bothUpTick, 10, a, b);
        System.out.printf("file: %d ticks, %d missed after both were up; runs by pid: %s%n", ticks.size(),
                Scenarios.gaps(ticks, bothUpTick), TwoInstancesOnRedisTest.byPid(ticks));
    }
}
