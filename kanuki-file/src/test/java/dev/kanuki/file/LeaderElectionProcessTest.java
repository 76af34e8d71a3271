package dev.kanuki.file;

import dev.kanuki.testkit.ElectionHarness;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Leader election across JVMs ({@link ElectionHarness}) on a ttl strategy ({@code mkdir}) and the
 * session strategy ({@code os}): three candidates; the leader is killed with SIGKILL three times;
 * each time another candidate is elected, with a higher epoch, and the shared log shows one leader
 * at a time. The bound for a new leader (docs/leader.md): {@code os}, at once (the kernel drops a
 * dead process's locks); {@code mkdir}, the lease (5 s here), though on one host it is about a
 * second, as the holder's pid is seen dead.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Tag("slow")
class LeaderElectionProcessTest {
    @TempDir
    Path tempDir;

    @ParameterizedTest
    @ValueSource(strings = {"mkdir", "os"})
    void killedLeadersAreReplacedWithRisingEpochsAndNeverOverlap(String strategy) throws Exception {
        String uri = "file:" + tempDir.resolve("locks") + "?strategy=" + strategy + "&lease=5s";
        Duration bound = strategy.equals("os") ? Duration.ZERO : Duration.ofSeconds(5);
        ElectionHarness.on(uri, tempDir, bound).run();
    }
}
