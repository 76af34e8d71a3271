package dev.kanuki.zookeeper;

import dev.kanuki.testkit.ElectionHarness;
import dev.kanuki.testkit.ZooKeeperServer;
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
 * Leader election across JVMs on ZooKeeper, a session backend ({@link ElectionHarness}): three
 * candidate JVMs; the leader is killed with SIGKILL three times; each time another candidate is
 * elected, with a higher epoch, within the documented bound plus a slack, and the shared log shows
 * one leader at a time.
 *
 * <p>The bound (docs/backends/zookeeper.md, "holder's JVM dies"; docs/leader.md): the session
 * timeout. A killed JVM's connection closes, but the ensemble ends its session, and deletes its
 * ephemeral lock node, only when the session times out; the standby first in line is then woken
 * by its watch. A 5 s session keeps the run short (the test server's tick of 200 ms allows
 * sessions from 400 ms, and expires them at the next tick).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Tag("servers")
@Tag("slow")
class ZooKeeperLeaderElectionProcessTest {
    private static final Duration SESSION = Duration.ofSeconds(5);
    private static ZooKeeperServer server;

    @TempDir
    Path tempDir;

    @BeforeAll
    static void startServer() {
        server = ZooKeeperServer.start(); // its own: the candidates' nodes do not meet other tests'
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    void killedLeadersAreReplacedWithinTheSessionTimeoutWithRisingEpochsAndNeverOverlap() throws Exception {
        String uri = server.kanukiUri() + "?session=" + SESSION.toMillis() + "ms";
        ElectionHarness.on(uri, tempDir, SESSION).run();
    }
}
