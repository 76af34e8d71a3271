package dev.kanuki.etcd;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.EtcdCluster;
import dev.kanuki.testkit.EtcdServer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A release while the cluster's leader dies (SIGKILL) and the others elect a new one. The
 * releasing provider keeps its lease alive meanwhile (it holds another lock), so a release that
 * was given up would leave the key for as long as that provider lives: another provider, or a
 * waiter already waiting, must still get the lock. The release is sent at several moments after
 * the kill, as the probes did (0–400 ms).
 */
@Tag("servers")
class EtcdFailoverTest {
    private static final String OPTIONS = "?lease=3s&timeout=3s";
    /** The election, a few retries and the waiter's watch on a loaded machine, generously. */
    private static final Duration WITHIN = Duration.ofSeconds(30);
    private static EtcdCluster cluster;

    @BeforeAll
    static void start() {
        cluster = EtcdCluster.start();
    }

    @AfterAll
    static void stop() {
        cluster.close();
    }

    @Test
    void aReleaseDuringALeaderFailoverFreesTheLock() throws Exception {
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

    private void releaseAfterLeaderKill(String name, long delayMillis, boolean waiter) throws Exception {
        cluster.leader(Duration.ofSeconds(60)); // the previous trial's election is over
        try (LockProvider a = LockProvider.open(cluster.kanukiUri() + OPTIONS);
             LockProvider b = LockProvider.open(cluster.kanukiUri() + OPTIONS)) {
            // held across the trial: a's engine keeps renewing a's lease, which the released key is on
            LockHandle keepAlive = a.lock(name + "-other").acquire(Duration.ofSeconds(20));
            LockHandle held = a.lock(name).acquire(Duration.ofSeconds(20));
            long token = held.fencingToken();
            CompletableFuture<LockHandle> waiting = null;
            if (waiter) {
                assertTrue(b.lock(name).tryAcquire().isEmpty(), "held by a"); // b is connected before the kill
                // it may start waiting just before the kill or during the election: both must be woken
                waiting = CompletableFuture.supplyAsync(() -> b.lock(name).acquire(Duration.ofSeconds(60)));
            }
            EtcdServer leader = cluster.leader(Duration.ofSeconds(60));
            leader.kill();
            // the moment of the release after the kill is what this test varies, not a synchronisation
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(delayMillis));
            long started = System.nanoTime();
            held.close();
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
            // documented: a release waits at most about the request timeout, then goes on in the background
            assertTrue(took < 20_000, "the release blocked its caller " + took + "ms");
            LockHandle next = waiter ? waiting.get(WITHIN.toSeconds(), TimeUnit.SECONDS)
                    : b.lock(name).acquire(WITHIN);
            assertTrue(next.fencingToken() > token, "tokens rise across the failover");
            assertTrue(a.lock(name).tryAcquire().isEmpty(), "two holders after the failover (delay " + delayMillis
                    + "ms)");
            next.close();
            keepAlive.close();
            leader.restart();
        }
    }
}
