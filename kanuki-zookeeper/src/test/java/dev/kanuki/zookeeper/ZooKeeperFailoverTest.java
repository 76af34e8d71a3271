package dev.kanuki.zookeeper;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.ZooKeeperEnsemble;
import dev.kanuki.testkit.ZooKeeperServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A release while the ensemble's leader dies (SIGKILL) and the others elect a new one: the
 * release's delete gets no definite answer (the connection drops, the session survives on another
 * member), and the lock node must still go, so that another JVM, or a waiter already in line, gets
 * the lock. The release is sent at several moments after the kill, as the probes did (0–400 ms).
 */
class ZooKeeperFailoverTest {
    /** Sessions of 4 s: a dead member's clients move within it, and the session survives the election. */
    private static final String OPTIONS = "?session=4s&timeout=3s";
    /**
     * How long another JVM may take to get the lock after the release: the election, the client's
     * reconnection (at most the session timeout) and a JVM start on a loaded machine, generously.
     */
    private static final Duration WITHIN = Duration.ofSeconds(45);
    private static ZooKeeperEnsemble ensemble;

    @TempDir
    Path logs;

    @BeforeAll
    static void start() {
        ensemble = ZooKeeperEnsemble.start();
    }

    @AfterAll
    static void stop() {
        ensemble.close();
    }

    @Test
    void aReleaseDuringALeaderFailoverFreesTheLockForAnotherJvm() throws Exception {
        for (long delay : List.of(0L, 100L, 400L)) {
            releaseAfterLeaderKill("released-" + delay, delay, false);
        }
    }

    @Test
    void aWaiterIsWokenByAReleaseDuringALeaderFailover() throws Exception {
        for (long delay : List.of(0L, 200L)) {
            releaseAfterLeaderKill("waited-" + delay, delay, true);
        }
    }

    /**
     * Holds {@code name}, kills the leader, releases {@code delayMillis} later, and expects a JVM
     * that was waiting already ({@code waiter}) or starts after the release to get the lock in time.
     */
    private void releaseAfterLeaderKill(String name, long delayMillis, boolean waiter) throws Exception {
        ensemble.leader(Duration.ofSeconds(60)); // the previous trial's election is over
        try (LockProvider a = LockProvider.open(ensemble.kanukiUri() + OPTIONS)) {
            LockHandle held = a.lock(name).acquire(Duration.ofSeconds(20));
            long token = held.fencingToken();
            HolderJvm other = null;
            try {
                if (waiter) {
                    other = HolderJvm.start(ensemble.kanukiUri() + OPTIONS, name, "exclusive",
                            logs.resolve(name + ".log"));
                    awaitPlaceInQueue(name);
                }
                ZooKeeperServer leader = ensemble.leader(Duration.ofSeconds(60));
                leader.kill();
                // the moment of the release after the kill is what this test varies, not a synchronisation
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(delayMillis));
                long started = System.nanoTime();
                held.close();
                long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                // documented: a release waits at most about the request timeout, then goes on in the background
                assertTrue(took < 20_000, "the release blocked its caller " + took + "ms");
                if (!waiter) {
                    other = HolderJvm.start(ensemble.kanukiUri() + OPTIONS, name, "exclusive",
                            logs.resolve(name + ".log"));
                }
                long next = other.awaitHeld(WITHIN);
                assertTrue(next > token, "tokens rise across the failover: " + token + " then " + next);
                // the releasing JVM cannot take it again through its old node while the other holds
                assertTrue(a.lock(name).tryAcquire().isEmpty(), "two holders after the failover (delay "
                        + delayMillis + "ms)");
                other.release();
                leader.restart();
            } finally {
                if (other != null) {
                    other.close();
                }
            }
        }
    }

    /** Waits until the waiter JVM has its place in the lock's wait queue. */
    private static void awaitPlaceInQueue(String name) {
        String dir = NodePaths.under("/kanuki").lockQueue(name);
        try (CuratorFramework zk = CuratorFrameworkFactory.newClient(ensemble.connectString(), new RetryOneTime(200))) {
            zk.start();
            Awaitility.await("the waiter's place in the queue").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                    .until(() -> !zk.getChildren().forPath(dir).isEmpty());
        }
    }
}
