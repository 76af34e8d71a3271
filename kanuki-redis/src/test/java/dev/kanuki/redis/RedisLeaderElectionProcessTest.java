package dev.kanuki.redis;

import dev.kanuki.testkit.ElectionHarness;
import dev.kanuki.testkit.RedisServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Leader election across JVMs on Redis, a ttl backend ({@link ElectionHarness}): three candidate
 * JVMs; the leader is killed with SIGKILL three times; each time another candidate is elected,
 * with a higher epoch, within the documented bound plus a slack, and the shared log shows one
 * leader at a time.
 *
 * <p>The bound (docs/backends/redis.md, "a waiter for a holder that died is served within the
 * holder's remaining lease plus about 1/16 of it"): a killed leader's key expires with its lease,
 * and the standbys, told the key's remaining lease when refused, try again right then. A 5 s lease
 * keeps the run short. The ttl-pause case (a leader stopped past its lease may act for a moment
 * after the next was elected, docs/leader.md) is not exercised: SIGKILL does not pause.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Tag("servers")
@Tag("slow")
class RedisLeaderElectionProcessTest {
    private static final Duration LEASE = Duration.ofSeconds(5);
    private static RedisServer redis;

    @TempDir
    Path tempDir;

    @BeforeAll
    static void startServer() {
        redis = RedisServer.start(); // its own: the candidates' keys do not meet other tests'
    }

    @AfterAll
    static void stopServer() {
        if (redis != null) {
            redis.close();
        }
    }

    @Test
    void killedLeadersAreReplacedWithinTheLeaseWithRisingEpochsAndNeverOverlap() throws Exception {
        String uri = redis.kanukiUri() + "?lease=" + LEASE.toMillis() + "ms";
        ElectionHarness.on(uri, tempDir, LEASE.plus(LEASE.dividedBy(16))).run();
    }
}
