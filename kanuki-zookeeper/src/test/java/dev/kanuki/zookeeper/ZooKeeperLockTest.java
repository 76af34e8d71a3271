package dev.kanuki.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.spi.SafeNames;
import dev.kanuki.testkit.ZooKeeperServer;
import dev.kanuki.spi.ChangeSubscription;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.LockUri;
import java.util.concurrent.CountDownLatch;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.zookeeper.data.Stat;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Test;

/** What the contract does not show: one request per step, restarts, waking by watch, a paused server. */
class ZooKeeperLockTest extends WithZooKeeperServer {

    private static String node(String name) {
        return "/kanuki/lock/" + SafeNames.stem(name, "L");
    }

    /** @return how many requests the server has received on the connection of this session */
    private static long received(long sessionId) {
        String cons = server.fourLetterWord("cons");
        for (String line : cons.split("\n")) {
            if (line.contains("sid=0x" + Long.toHexString(sessionId) + ",")) {
                Matcher m = Pattern.compile("recved=(\\d+)").matcher(line);
                assertTrue(m.find(), line);
                return Long.parseLong(m.group(1));
            }
        }
        throw new AssertionError("no connection of session 0x" + Long.toHexString(sessionId) + " in:\n" + cons);
    }

    @Test
    void anUncontendedAcquisitionIsOneRequestAndItsReleaseOneMore() throws Exception {
        // a long session: no ping in between
        try (LockProvider locks = LockProvider.open(server.kanukiUri() + "?session=60s")) {
            LockHandle first = locks.lock("one-request").acquire(Duration.ofSeconds(5)); // also makes the parents
            Stat stat = admin.checkExists().forPath(node("one-request"));
            assertEquals(first.fencingToken(), stat.getCzxid(), "the token is the node's czxid");
            long session = stat.getEphemeralOwner();
            first.close();
            long fewest = Long.MAX_VALUE;
            for (int i = 0; i < 3 && fewest > 2; i++) { // the engine's once-a-second check may fall in between
                long before = received(session);
                locks.lock("one-request").tryAcquire().orElseThrow().close();
                fewest = Math.min(fewest, received(session) - before);
            }
            assertEquals(2, fewest, "requests for tryAcquire + close: one create, one delete");
            assertEquals(null, admin.checkExists().forPath(node("one-request")), "released");
        }
    }

    @Test
    void tokensKeepRisingAcrossAServerRestart() throws Exception {
        try (ZooKeeperServer own = ZooKeeperServer.start()) {
            long before;
            try (LockProvider locks = LockProvider.open(own.kanukiUri());
                 LockHandle h = locks.lock("restart").acquire(Duration.ofSeconds(5))) {
                before = h.fencingToken();
            }
            own.kill();
            own.restart();
            try (LockProvider locks = LockProvider.open(own.kanukiUri() + "?timeout=30s");
                 LockHandle h = locks.lock("restart").acquire(Duration.ofSeconds(30))) {
                assertTrue(h.fencingToken() > before, h.fencingToken() + " after a restart, " + before + " before");
            }
        }
    }

    @Test
    void statusNamesTheHolder() {
        try (LockProvider locks = LockProvider.open(server.kanukiUri());
             LockHandle h = locks.lock("名前 with/slash").acquire(Duration.ofSeconds(5))) {
            LockStatus status = locks.status("名前 with/slash");
            assertTrue(status.isHeld());
            assertEquals(h.fencingToken(), status.lastFencingToken());
            assertTrue(locks.list().stream().anyMatch(s -> s.name().equals("名前 with/slash")));
            assertThrows(IllegalStateException.class, () -> locks.breakLock("名前 with/slash", false));
        }
    }

    @Test
    void aPausedServerFailsCallsByTheirDeadlineAndLeavesNoNodeBehind() throws Exception {
        try (ZooKeeperServer own = ZooKeeperServer.start();
             LockProvider locks = LockProvider.open(own.kanukiUri() + "?timeout=1s")) {
            locks.lock("warm").tryAcquire().orElseThrow().close();
            own.pause();
            try {
                long start = System.nanoTime();
                LockException e = assertThrows(LockException.class, () -> locks.lock("paused").acquire(Duration.ofSeconds(1)));
                long took = (System.nanoTime() - start) / 1_000_000;
                assertTrue(took < 10_000, "acquire on a paused server took " + took + "ms");
                assertTrue(e instanceof LockBackendException || e.getMessage().contains("ZooKeeper"), e.toString());
            } finally {
                own.resume();
            }
            // The create sent before the pause is applied after it: it must not leave a lock nobody holds.
            Awaitility.await().atMost(Duration.ofSeconds(20))
                    .until(() -> locks.status("paused").state() == LockStatus.State.FREE);
            try (LockHandle h = locks.lock("paused").acquire(Duration.ofSeconds(10))) {
                h.verify();
            }
        }
    }

    @Test
    void aWaiterIsWokenByTheReleaseOfAnotherProvider() throws Exception {
        try (LockProvider holderSide = LockProvider.open(server.kanukiUri());
             // another scope (another host name): this JVM keeps no common queue for the two
             LockProvider waiterSide = LockProvider.open("zookeeper://localhost:" + server.port())) {
            LockHandle held = holderSide.lock("wake").acquire(Duration.ofSeconds(5));
            CompletableFuture<LockHandle> waiting = waiterSide.lock("wake").acquireAsync(Duration.ofSeconds(30));
            Thread.sleep(300);
            assertFalse(waiting.isDone());
            held.close();
            try (LockHandle next = waiting.get(10, TimeUnit.SECONDS)) {
                assertTrue(next.fencingToken() > held.fencingToken());
            }
        }
    }

    @Test
    void aSuspendedConnectionCountsAsLostEvenWhenTheSessionSurvives() throws Exception {
        try (ZooKeeperServer own = ZooKeeperServer.start();
             LockProvider locks = LockProvider.open(own.kanukiUri() + "?session=30s&timeout=15s");
             LockProvider other = LockProvider.open("zookeeper://localhost:" + own.port() + "?session=30s")) {
            LockHandle held = locks.lock("suspended").acquire(Duration.ofSeconds(5));
            // A restart cuts every connection; sessions and their ephemeral nodes survive it.
            own.kill();
            own.restart();
            held.lost().get(30, TimeUnit.SECONDS); // suspended: the holder cannot know the session lived
            assertFalse(held.isHeld());
            long token = held.fencingToken();
            held.close(); // the node was still ours: the release removes it rather than leave it to the session
            try (LockHandle next = other.lock("suspended").acquire(Duration.ofSeconds(20))) {
                assertTrue(next.fencingToken() > token);
            }
        }
    }

    @Test
    void aSemaphoreWaiterIsWokenWhenAPermitIsReturned() throws Exception {
        try (LockProvider holderSide = LockProvider.open(server.kanukiUri());
             LockProvider waiterSide = LockProvider.open("zookeeper://localhost:" + server.port())) {
            LockHandle first = holderSide.semaphore("permits", 2).acquire(Duration.ofSeconds(5));
            LockHandle second = holderSide.semaphore("permits", 2).acquire(Duration.ofSeconds(5));
            assertTrue(first.fencingToken() != second.fencingToken(), "two permit nodes, two tokens");
            CompletableFuture<LockHandle> waiting = waiterSide.semaphore("permits", 2).acquireAsync(Duration.ofSeconds(30));
            Thread.sleep(300);
            assertFalse(waiting.isDone(), "a third permit of two");
            second.close(); // the second permit's node: the first waiter in line watches every permit
            try (LockHandle next = waiting.get(10, TimeUnit.SECONDS)) {
                assertTrue(next.fencingToken() > second.fencingToken());
            }
            first.close();
        }
    }

    /**
     * The waiter's backend is told of another provider's release by its watch: the notification
     * itself is checked, not how soon the waiter got the lock (a polling fallback would also get
     * it, and a loaded machine may take any time).
     */
    @Test
    void aWaitersWatchIsNotifiedOfAnotherProvidersRelease() throws Exception {
        try (LockProvider holderSide = LockProvider.open(server.kanukiUri())) {
            LockBackend waiterSide = new ZooKeeperLockBackendFactory().create(LockUri.parse("zookeeper://localhost:" + server.port()));
            try {
                LockHandle held = holderSide.lock("watched").acquire(Duration.ofSeconds(5));
                LockRequest request = new LockRequest("watched", LockMode.EXCLUSIVE, 1, Duration.ofSeconds(30));
                assertTrue(waiterSide.tryAcquire(request).isEmpty(), "a held lock");
                CountDownLatch changed = new CountDownLatch(1);
                ChangeSubscription subscription = waiterSide.watchChanges(request, changed::countDown);
                assertNotNull(subscription, "this backend watches");
                assertFalse(changed.await(300, TimeUnit.MILLISECONDS), "notified while the lock was still held");
                held.close();
                assertTrue(changed.await(60, TimeUnit.SECONDS), "the release was never notified");
                subscription.cancel();
                Grant next = waiterSide.tryAcquire(request).orElseThrow();
                assertTrue(next.fencingToken() > held.fencingToken());
                waiterSide.release(next);
            } finally {
                waiterSide.close();
            }
        }
    }
}
