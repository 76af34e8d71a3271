package dev.kanuki.zookeeper;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.ZooKeeperEnsemble;
import dev.kanuki.testkit.ZooKeeperServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A release while the ensemble's leader dies (SIGKILL) and the others elect a new one: the
 * release's delete gets no definite answer (the connection drops, the session survives on another
 * member), and the lock node must still go, so that another JVM, or a waiter already in line, gets
 * the lock. The release is sent at several moments after the kill, as the probes did (0–400 ms).
 */
@Tag("servers")
@Tag("slow")
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
     * A waiter that gives up (its future cancelled) while the leader dies must still leave the
     * queue: its place's delete fails with the connection, and a place left behind would hold up
     * the waiter behind it for as long as its provider lives.
     */
    @Test
    void aWaiterGivingUpDuringALeaderFailoverLeavesTheQueue() throws Exception {
        String name = "gives-up";
        ensemble.leader(Duration.ofSeconds(60));
        // the holder and the waiter behind are other JVMs: providers of one JVM on one ensemble
        // queue behind each other in the JVM, and only c's waiter must be in ZooKeeper's queue here
        try (HolderJvm holder = HolderJvm.start(ensemble.kanukiUri() + OPTIONS, name, "exclusive",
                logs.resolve(name + "-holder.log"));
             LockProvider c = LockProvider.open(ensemble.kanukiUri() + OPTIONS)) {
            long token = holder.awaitHeld(WITHIN);
            CompletableFuture<LockHandle> givesUp = c.lock(name).acquireAsync(Duration.ofSeconds(120));
            awaitPlacesInQueue(name, 1);
            try (HolderJvm behind = HolderJvm.start(ensemble.kanukiUri() + OPTIONS, name, "exclusive",
                    logs.resolve(name + "-behind.log"))) {
                awaitPlacesInQueue(name, 2); // behind c's place
                ZooKeeperServer leader = ensemble.leader(Duration.ofSeconds(60));
                leader.kill();
                givesUp.cancel(true);
                holder.release();
                assertTrue(behind.awaitHeld(WITHIN) > token, "tokens rise across the failover");
                assertTrue(c.lock(name).tryAcquire().isEmpty(), "two holders after the failover");
                behind.release();
                leader.restart();
            }
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
                    awaitPlacesInQueue(name, 1);
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

    /** Waits until the lock's wait queue has {@code places} places. */
    private static void awaitPlacesInQueue(String name, int places) {
        String dir = NodePaths.under("/kanuki").lockQueue(name);
        try (CuratorFramework zk = CuratorFrameworkFactory.newClient(ensemble.connectString(), new RetryOneTime(200))) {
            zk.start();
            Awaitility.await("the waiter's place in the queue").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(100)).ignoreExceptions()
                    .until(() -> zk.getChildren().forPath(dir).size() >= places);
        }
    }
}
