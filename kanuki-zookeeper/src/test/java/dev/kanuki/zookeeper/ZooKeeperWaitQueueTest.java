package dev.kanuki.zookeeper;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.LockTimeoutException;
import dev.kanuki.spi.SafeNames;
import dev.kanuki.testkit.ZooKeeperServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.retry.RetryOneTime;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Contended waiting: one queue per name, FIFO across JVMs, each waiter watching one node, no
 * place left behind; the read-write rule on that queue.
 */
@Tag("slow")
class ZooKeeperWaitQueueTest extends WithZooKeeperServer {
    @TempDir
    java.nio.file.Path tempDir;

    /**
     * @param i 0, 1 or 2
     * @return a provider on the test server in one of three scopes (host spellings): this JVM
     *     keeps no common in-JVM queue for them, so they meet only in ZooKeeper's wait queue
     */
    private static LockProvider inScope(int i) {
        String port = ":" + server.port();
        return LockProvider.open(switch (i) {
            case 0 -> "zookeeper://127.0.0.1" + port;
            case 1 -> "zookeeper://localhost" + port;
            default -> "zookeeper://localhost" + port + ",127.0.0.1" + port;
        });
    }

    /** @return the session that owns a place in the name's queue */
    private static long sessionOf(String name, String place) throws Exception {
        return admin.checkExists().forPath(queueDir(name) + "/" + place).getEphemeralOwner();
    }

    /** Waits until {@code session} watches {@code path} on the server. */
    private static void awaitWatch(String path, long session) {
        Awaitility.await().atMost(Duration.ofSeconds(30))
                .until(() -> ServerWatches.byPath(server).getOrDefault(path, List.of()).contains(session));
    }

    private static String lockNode(String name) {
        return "/kanuki/lock/" + SafeNames.stem(name, "L");
    }

    private static String queueDir(String name) {
        return "/kanuki/queue/" + SafeNames.stem(name, "L");
    }

    /** @return the places in the name's queue, in order */
    private static List<String> places(String name) throws Exception {
        return children(queueDir(name));
    }

    /** Waits (generously: other JVMs start on a loaded machine) until the name's queue has {@code count} places. */
    private static void awaitPlaces(String name, int count) {
        Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> places(name).size() == count);
    }

    /** Waits until neither the lock node nor the queue directory is left. */
    private static void awaitNothingLeft(String name) {
        Awaitility.await().atMost(Duration.ofSeconds(20)).until(() -> admin.checkExists().forPath(queueDir(name)) == null
                && admin.checkExists().forPath(lockNode(name)) == null);
    }

    @Test
    @Timeout(180)
    void waitersInThreeJvmsAreServedInQueueOrderAndAReleaseWakesOnlyTheNext() throws Exception {
        String name = "fifo across jvms";
        // a long session: the waiters' clients send nothing but pings (which lcxid does not count)
        String uri = server.kanukiUri() + "?session=60s";
        try (LockProvider locks = LockProvider.open(uri)) {
            LockHandle held = locks.lock(name).acquire(Duration.ofSeconds(10));
            List<HolderJvm> waiters = new ArrayList<>();
            try {
                for (int i = 0; i < 3; i++) {
                    waiters.add(HolderJvm.start(uri, name, "exclusive", tempDir.resolve("waiter" + i + ".err")));
                    int queued = i + 1;
                    awaitPlaces(name, queued);
                }
                List<Long> sessions = new ArrayList<>();
                for (String place : places(name)) {
                    sessions.add(admin.checkExists().forPath(queueDir(name) + "/" + place).getEphemeralOwner());
                }
                // Each waiter watches one node: the first the lock node, the others the place before theirs.
                ServerWatches.awaitWatching(server, sessions);
                Map<String, List<Long>> watches = ServerWatches.byPath(server);
                assertEquals(List.of(sessions.get(0)), watches.get(lockNode(name)), "who watches the lock node: " + watches);
                List<String> places = places(name);
                for (int i = 1; i < 3; i++) {
                    assertEquals(List.of(sessions.get(i)), watches.get(queueDir(name) + "/" + places.get(i - 1)),
                            "who watches place " + (i - 1) + ": " + watches);
                }
                long[] before = {ServerWatches.lastRequest(server, sessions.get(1)),
                        ServerWatches.lastRequest(server, sessions.get(2))};
                held.close();
                long previous = held.fencingToken();
                for (int served = 0; served < 3; served++) {
                    long token = waiters.get(served).awaitHeld(Duration.ofSeconds(30));
                    assertTrue(token > previous, "token " + token + " after " + previous);
                    previous = token;
                    for (int later = served + 1; later < 3; later++) {
                        assertFalse(waiters.get(later).held(), "waiter " + later + " got the lock before waiter " + served);
                    }
                    if (served == 0) {
                        // the release woke the first waiter only: the others sent no request
                        assertEquals(before[0], ServerWatches.lastRequest(server, sessions.get(1)), "waiter 1 woke");
                        assertEquals(before[1], ServerWatches.lastRequest(server, sessions.get(2)), "waiter 2 woke");
                    }
                    waiters.get(served).release();
                }
            } finally {
                for (HolderJvm w : waiters) {
                    w.close();
                }
            }
            awaitNothingLeft(name);
        }
    }

    @Test
    @Timeout(120)
    void aWaiterWokenByTheReleaseBeforeItHoldsWithoutAnotherRequest() throws Exception {
        String name = "woken holds";
        try (LockProvider a = inScope(0);
             LockProvider b = inScope(1);
             LockProvider c = inScope(2)) {
            LockHandle first = a.lock(name).acquire(Duration.ofSeconds(5)); // the fast path: the lock node
            CompletableFuture<LockHandle> second = b.lock(name).acquireAsync(Duration.ofSeconds(30));
            awaitPlaces(name, 1);
            awaitWatch(lockNode(name), sessionOf(name, places(name).get(0)));
            first.close();
            LockHandle bHeld = second.get(10, TimeUnit.SECONDS); // first in line, the lock node gone: by its place
            CompletableFuture<LockHandle> third = c.lock(name).acquireAsync(Duration.ofSeconds(30));
            awaitPlaces(name, 2);
            List<String> places = places(name);
            long cSession = sessionOf(name, places.get(1));
            awaitWatch(queueDir(name) + "/" + places.get(0), cSession);
            long before = ServerWatches.lastRequest(server, cSession);
            bHeld.close();
            try (LockHandle cHeld = third.get(10, TimeUnit.SECONDS)) {
                // the deleted place was first and no fast-path holder can come back while c queues:
                // the event alone says c holds, no read needed
                assertEquals(before, ServerWatches.lastRequest(server, cSession), "c asked the server before holding");
                assertTrue(bHeld.fencingToken() > first.fencingToken(), "b's token after a's");
                assertTrue(cHeld.fencingToken() > bHeld.fencingToken(), "c's token after b's");
                LockStatus status = a.status(name);
                assertTrue(status.isHeld());
                assertEquals(cHeld.fencingToken(), status.lastFencingToken(), "status names c's place");
                assertEquals(List.of(places.get(1)), places(name));
            }
            awaitNothingLeft(name);
        }
    }

    @Test
    @Timeout(120)
    void aWaiterWhosePredecessorGivesUpDoesNotOvertakeTheHolder() throws Exception {
        String name = "predecessor gives up";
        try (LockProvider a = inScope(0);
             LockProvider b = inScope(1);
             LockProvider c = inScope(2)) {
            LockHandle held = a.lock(name).acquire(Duration.ofSeconds(5)); // the fast path: the lock node
            CompletableFuture<LockHandle> bWaits = b.lock(name).acquireAsync(Duration.ofSeconds(60));
            awaitPlaces(name, 1);
            CompletableFuture<LockHandle> cWaits = c.lock(name).acquireAsync(Duration.ofSeconds(60));
            awaitPlaces(name, 2);
            List<String> places = places(name);
            long cSession = sessionOf(name, places.get(1));
            awaitWatch(queueDir(name) + "/" + places.get(0), cSession);
            // b leaves; it was first, but a holds the lock node, taken before the queue existed
            bWaits.cancel(true);
            awaitPlaces(name, 1);
            awaitWatch(lockNode(name), cSession);
            assertFalse(cWaits.isDone(), "c overtook the fast-path holder");
            assertTrue(held.isHeld());
            held.close();
            LockHandle cHeld = cWaits.get(10, TimeUnit.SECONDS); // by its place
            assertTrue(cHeld.fencingToken() > held.fencingToken());

            // Now c holds by its place; b and then a queue behind it, and b leaves: b was not
            // first, so c is still before a, which must read the queue again and wait for c.
            CompletableFuture<LockHandle> bAgain = b.lock(name).acquireAsync(Duration.ofSeconds(60));
            awaitPlaces(name, 2);
            CompletableFuture<LockHandle> aWaits = a.lock(name).acquireAsync(Duration.ofSeconds(60));
            awaitPlaces(name, 3);
            places = places(name);
            long aSession = sessionOf(name, places.get(2));
            awaitWatch(queueDir(name) + "/" + places.get(1), aSession);
            bAgain.cancel(true);
            awaitPlaces(name, 2);
            awaitWatch(queueDir(name) + "/" + places.get(0), aSession);
            assertFalse(aWaits.isDone(), "a overtook c, which holds");
            assertTrue(cHeld.isHeld());
            cHeld.close();
            try (LockHandle aHeld = aWaits.get(10, TimeUnit.SECONDS)) {
                assertTrue(aHeld.fencingToken() > cHeld.fencingToken());
            }
            awaitNothingLeft(name);
        }
    }

    @Test
    @Timeout(120)
    void alternatingProvidersAreServedInTurnWithRisingTokens() throws Exception {
        // two providers taking turns on one name: every acquisition but the first queues behind
        // the other's place, and each goes straight to the queue it saw in use
        String name = "in turn";
        try (LockProvider a = inScope(0);
             LockProvider b = inScope(1)) {
            LockHandle held = a.lock(name).acquire(Duration.ofSeconds(5));
            long previous = held.fencingToken();
            List<LockProvider> sides = List.of(a, b);
            for (int turn = 1; turn <= 12; turn++) {
                LockProvider next = sides.get(turn % 2);
                CompletableFuture<LockHandle> waiting = next.lock(name).acquireAsync(Duration.ofSeconds(30));
                awaitPlaces(name, turn == 1 ? 1 : 2); // the first holder took the lock node, the others their places
                assertFalse(waiting.isDone(), "turn " + turn + " took a held lock");
                held.close();
                held = waiting.get(10, TimeUnit.SECONDS);
                assertTrue(held.fencingToken() > previous, "turn " + turn + ": token " + held.fencingToken()
                        + " after " + previous);
                assertEquals(held.fencingToken(), a.status(name).lastFencingToken(), "turn " + turn);
                previous = held.fencingToken();
            }
            held.close();
            awaitNothingLeft(name);
            // The queue is gone, though b last saw it in use (a was still waiting when b released):
            // b's next acquisition, sent straight to the queue, finds none and takes the fast path.
            try (LockHandle again = b.lock(name).acquire(Duration.ofSeconds(5))) {
                assertTrue(again.fencingToken() > previous);
                assertTrue(admin.checkExists().forPath(lockNode(name)) != null, "taken through a queue, not the lock node");
                assertTrue(admin.checkExists().forPath(queueDir(name)) == null, "a queue left behind");
            }
            awaitNothingLeft(name);
        }
    }

    @Test
    void theInJvmQueueAndTheWaitQueueCompose() throws Exception {
        String name = "two queues";
        try (LockProvider a = inScope(0);
             LockProvider b = inScope(1);
             LockProvider c = inScope(2)) {
            LockHandle held = c.lock(name).acquire(Duration.ofSeconds(5));
            CompletableFuture<LockHandle> a1 = a.lock(name).acquireAsync(Duration.ofSeconds(30));
            awaitPlaces(name, 1);
            CompletableFuture<LockHandle> b1 = b.lock(name).acquireAsync(Duration.ofSeconds(30));
            awaitPlaces(name, 2);
            // a2 waits in a's in-JVM queue behind a1: one place per JVM and name in the wait queue
            CompletableFuture<LockHandle> a2 = a.lock(name).acquireAsync(Duration.ofSeconds(30));
            held.close();
            LockHandle first = a1.get(10, TimeUnit.SECONDS);
            assertEquals(2, places(name).size(), "a1 holding, b1 waiting, a2 in a's own queue");
            assertFalse(b1.isDone() || a2.isDone());
            first.close();
            LockHandle second = b1.get(10, TimeUnit.SECONDS);
            assertFalse(a2.isDone(), "a2 overtook b1, which queued before it");
            second.close();
            a2.get(10, TimeUnit.SECONDS).close();
            awaitNothingLeft(name);
        }
    }

    @Test
    void aWaiterThatGivesUpLeavesNoPlaceBehind() throws Exception {
        String name = "gives up";
        try (LockProvider holderSide = inScope(0);
             LockProvider waiterSide = inScope(1)) {
            LockHandle held = holderSide.lock(name).acquire(Duration.ofSeconds(5));
            try {
                waiterSide.lock(name).acquire(Duration.ofMillis(500));
                throw new AssertionError("acquired a held lock");
            } catch (LockTimeoutException expected) {
                // its place goes with it
            }
            assertEquals(List.of(), places(name), "the timed-out waiter's place");
            CompletableFuture<LockHandle> cancelled = waiterSide.lock(name).acquireAsync(Duration.ofSeconds(30));
            awaitPlaces(name, 1);
            cancelled.cancel(true);
            awaitPlaces(name, 0);
            CompletableFuture<LockHandle> served = waiterSide.lock(name).acquireAsync(Duration.ofSeconds(30));
            awaitPlaces(name, 1);
            held.close();
            try (LockHandle queued = served.get(10, TimeUnit.SECONDS);
                 LockProvider newcomer = inScope(2)) {
                // the lock node is free, but a queued holder holds: the fast path must not get in
                assertTrue(newcomer.lock(name).tryAcquire().isEmpty(), "a newcomer overtook the queue");
                assertTrue(queued.isHeld());
            }
            // the last to leave removes the queue: the next acquisition is the one-request fast path again
            awaitNothingLeft(name);
        }
    }

    @Test
    @Timeout(120)
    void aWaiterWhoseJvmDiesLeavesTheLine() throws Exception {
        String name = "waiter dies";
        try (LockProvider holderSide = inScope(0);
             LockProvider waiterSide = inScope(1)) {
            LockHandle held = holderSide.lock(name).acquire(Duration.ofSeconds(5));
            HolderJvm doomed = HolderJvm.start(server.kanukiUri() + "?session=1s", name, "exclusive",
                    tempDir.resolve("doomed.err"));
            awaitPlaces(name, 1);
            CompletableFuture<LockHandle> next = waiterSide.lock(name).acquireAsync(Duration.ofSeconds(60));
            awaitPlaces(name, 2);
            doomed.close(); // SIGKILL: its session expires, and its place with it
            awaitPlaces(name, 1);
            held.close();
            try (LockHandle h = next.get(10, TimeUnit.SECONDS)) {
                assertTrue(h.fencingToken() > held.fencingToken());
            }
            awaitNothingLeft(name);
        }
    }

    @Test
    @Timeout(120)
    void aWaiterKeepsItsPlaceThroughADroppedConnection() throws Exception {
        String name = "connection drops";
        try (ZooKeeperServer own = ZooKeeperServer.start();
             LockProvider holderSide = LockProvider.open(own.kanukiUri() + "?session=30s&timeout=15s");
             LockProvider waiterSide = LockProvider.open("zookeeper://localhost:" + own.port() + "?session=30s");
             CuratorFramework look = CuratorFrameworkFactory.newClient(own.connectString(), new RetryOneTime(100))) {
            look.start();
            LockHandle held = holderSide.lock(name).acquire(Duration.ofSeconds(5));
            CompletableFuture<LockHandle> waiting = waiterSide.lock(name).acquireAsync(Duration.ofSeconds(90));
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> look.getChildren().forPath(queueDir(name)).size() == 1);
            List<String> before = look.getChildren().forPath(queueDir(name));
            Awaitility.await().atMost(Duration.ofSeconds(30))
                    .until(() -> ServerWatches.byPath(own).containsKey(lockNode(name))); // the waiter watches the holder
            // A restart cuts every connection; sessions, their nodes and (once reconnected) their watches survive it.
            own.kill();
            own.restart();
            held.lost().get(30, TimeUnit.SECONDS); // the holder cannot know its session lived: it lets go
            held.close(); // its node was still its own: the release removes it, which wakes the waiter
            try (LockHandle next = waiting.get(30, TimeUnit.SECONDS)) {
                assertEquals(before, look.getChildren().forPath(queueDir(name)), "the waiter took a new place");
                assertTrue(next.fencingToken() > held.fencingToken());
            }
        }
    }

    @Test
    void onlyTheFirstSemaphoreWaiterWatchesThePermits() throws Exception {
        String name = "permits in line";
        String dir = "/kanuki/queue/" + SafeNames.stem(name, "S");
        try (LockProvider a = inScope(0);
             LockProvider b = inScope(1);
             LockProvider c = inScope(2)) {
            LockHandle first = a.semaphore(name, 2).acquire(Duration.ofSeconds(5));
            LockHandle second = a.semaphore(name, 2).acquire(Duration.ofSeconds(5));
            CompletableFuture<LockHandle> third = b.semaphore(name, 2).acquireAsync(Duration.ofSeconds(30));
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> children(dir).size() == 1);
            CompletableFuture<LockHandle> fourth = c.semaphore(name, 2).acquireAsync(Duration.ofSeconds(30));
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> children(dir).size() == 2);
            long head = admin.checkExists().forPath(dir + "/" + children(dir).get(0)).getEphemeralOwner();
            long behind = admin.checkExists().forPath(dir + "/" + children(dir).get(1)).getEphemeralOwner();
            ServerWatches.awaitWatching(server, List.of(head, behind));
            Map<String, List<Long>> watches = ServerWatches.byPath(server);
            String permits = "/kanuki/permit/" + SafeNames.stem(name, "S") + ".";
            assertEquals(List.of(head), watches.get(permits + "0"), "who watches permit 0: " + watches);
            assertEquals(List.of(head), watches.get(permits + "1"), "who watches permit 1: " + watches);
            long before = ServerWatches.lastRequest(server, behind);
            second.close();
            LockHandle third1 = third.get(10, TimeUnit.SECONDS);
            assertTrue(third1.fencingToken() > second.fencingToken());
            assertFalse(fourth.isDone(), "a third permit of two");
            // the returned permit woke the first in line; taking it woke the next, which now watches the permits
            Awaitility.await().atMost(Duration.ofSeconds(10))
                    .until(() -> List.of(behind).equals(ServerWatches.byPath(server).get(permits + "0")));
            assertEquals(List.of(behind), ServerWatches.byPath(server).get(permits + "1"), "the first in line, served,"
                    + " keeps no watch");
            assertTrue(ServerWatches.lastRequest(server, behind) > before);
            first.close();
            fourth.get(10, TimeUnit.SECONDS).close();
            third1.close();
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> admin.checkExists().forPath(dir) == null);
        }
    }

    private static List<String> children(String dir) throws Exception {
        List<String> children;
        try {
            children = new ArrayList<>(admin.getChildren().forPath(dir));
        } catch (KeeperException.NoNodeException e) {
            return List.of(); // no queue (the last place to leave removes it)
        }
        children.sort((x, y) -> x.substring(x.length() - 10).compareTo(y.substring(y.length() - 10)));
        return children;
    }

    @Test
    void aReaderWaitsForAWriterQueuedBeforeIt() throws Exception {
        String name = "rw order";
        try (LockProvider a = inScope(0);
             LockProvider b = inScope(1);
             LockProvider c = inScope(2)) {
            LockHandle firstReader = a.readWriteLock(name).readLock().acquire(Duration.ofSeconds(5));
            CompletableFuture<LockHandle> writer = b.readWriteLock(name).writeLock().acquireAsync(Duration.ofSeconds(30));
            awaitPlaces(name, 2);
            CompletableFuture<LockHandle> secondReader = c.readWriteLock(name).readLock().acquireAsync(Duration.ofSeconds(30));
            awaitPlaces(name, 3);
            assertFalse(writer.isDone(), "the writer got in while a reader held");
            assertFalse(secondReader.isDone(), "a reader overtook the writer queued before it");
            firstReader.close();
            LockHandle w = writer.get(10, TimeUnit.SECONDS);
            assertTrue(w.fencingToken() > firstReader.fencingToken());
            assertFalse(secondReader.isDone(), "a reader got in while the writer held");
            w.close();
            try (LockHandle r = secondReader.get(10, TimeUnit.SECONDS)) {
                assertTrue(r.fencingToken() > w.fencingToken());
                assertEquals(dev.kanuki.LockStatus.State.HELD_SHARED, b.status(name).state());
            }
            awaitNothingLeft(name);
        }
    }

    @Test
    void readersInARowHoldTogetherAndAWriterWaitsForThemAll() throws Exception {
        String name = "rw readers";
        try (LockProvider a = inScope(0);
             LockProvider b = inScope(1);
             LockProvider c = inScope(2)) {
            LockHandle r1 = a.readWriteLock(name).readLock().acquire(Duration.ofSeconds(5));
            LockHandle r2 = b.readWriteLock(name).readLock().acquire(Duration.ofSeconds(5));
            CompletableFuture<LockHandle> writer = c.lock(name).acquireAsync(Duration.ofSeconds(30));
            awaitPlaces(name, 3);
            r2.close();
            assertFalse(writer.isDone(), "the writer got in while a reader held");
            r1.close();
            try (LockHandle w = writer.get(10, TimeUnit.SECONDS)) {
                assertTrue(w.fencingToken() > Math.max(r1.fencingToken(), r2.fencingToken()));
                Stat place = admin.checkExists().forPath(queueDir(name) + "/" + places(name).get(0));
                assertEquals(place.getCzxid(), w.fencingToken(), "a queued holder's token is its place's czxid");
            }
        }
    }
}
