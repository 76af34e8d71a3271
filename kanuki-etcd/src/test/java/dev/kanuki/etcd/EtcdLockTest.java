package dev.kanuki.etcd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockLostException;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.testkit.EtcdServer;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.options.GetOption;
import java.nio.charset.StandardCharsets;
import dev.kanuki.spi.ChangeSubscription;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.LockUri;
import java.util.concurrent.CountDownLatch;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** What the contract does not show: the session lease, restarts, waking by watch, a paused server. */
@Tag("servers")
class EtcdLockTest {
    private static EtcdServer server;
    private static Client admin;

    @BeforeAll
    static void start() {
        server = EtcdServer.start();
        admin = Client.builder().endpoints(server.endpoint()).build();
    }

    @AfterAll
    static void stop() {
        admin.close();
        server.close();
    }

    private static List<KeyValue> lockKeys() throws Exception {
        return admin.getKVClient().get(ByteSequence.from("/kanuki/lock/", StandardCharsets.UTF_8),
                GetOption.builder().isPrefix(true).build()).get(10, TimeUnit.SECONDS).getKvs();
    }

    @Test
    void theHolderIsToldWhenItsLeaseIsRevoked() throws Exception {
        try (LockProvider locks = LockProvider.open(server.kanukiUri() + "?lease=3s")) {
            LockHandle held = locks.lock("revoked").acquire(Duration.ofSeconds(5));
            long lease = lockKeys().stream().filter(kv -> kv.getCreateRevision() == held.fencingToken())
                    .findFirst().orElseThrow().getLease();
            admin.getLeaseClient().revoke(lease).get(10, TimeUnit.SECONDS); // as etcd does when the lease runs out
            LockLostException lost = held.lost().get(10, TimeUnit.SECONDS);
            assertEquals("revoked", lost.lockName());
            assertFalse(held.isHeld());
            held.close();
            // the provider makes itself a new lease: locking goes on
            try (LockHandle again = locks.lock("revoked").acquire(Duration.ofSeconds(5))) {
                assertTrue(again.fencingToken() > held.fencingToken());
                again.verify();
            }
        }
    }

    @Test
    void keysOfOneProviderShareOneLeaseThatEndsWithIt() throws Exception {
        LockProvider locks = LockProvider.open(server.kanukiUri());
        List<LockHandle> held = List.of(locks.lock("a").acquire(Duration.ofSeconds(5)),
                locks.lock("b").acquire(Duration.ofSeconds(5)), locks.lock("c").acquire(Duration.ofSeconds(5)));
        List<KeyValue> keys = lockKeys();
        assertEquals(3, keys.size());
        assertEquals(1, keys.stream().mapToLong(KeyValue::getLease).distinct().count(), "one lease per provider");
        long lease = keys.get(0).getLease();
        locks.close();
        held.forEach(h -> assertFalse(h.isHeld()));
        assertTrue(lockKeys().isEmpty(), "close released every key");
        assertTrue(admin.getLeaseClient().timeToLive(lease, io.etcd.jetcd.options.LeaseOption.DEFAULT)
                .get(10, TimeUnit.SECONDS).getTTL() <= 0, "the provider's lease was revoked at close");
    }

    @Test
    void tokensKeepRisingAcrossAServerRestart() throws Exception {
        try (EtcdServer own = EtcdServer.start()) {
            long before;
            try (LockProvider locks = LockProvider.open(own.kanukiUri());
                 LockHandle h = locks.lock("restart").acquire(Duration.ofSeconds(5))) {
                before = h.fencingToken();
            }
            own.kill();
            own.restart();
            try (LockProvider locks = LockProvider.open(own.kanukiUri());
                 LockHandle h = locks.lock("restart").acquire(Duration.ofSeconds(30))) {
                assertTrue(h.fencingToken() > before, h.fencingToken() + " after a restart, " + before + " before");
            }
        }
    }

    @Test
    void statusNamesTheHolderAndItsLease() {
        try (LockProvider locks = LockProvider.open(server.kanukiUri());
             LockHandle h = locks.lock("名前 with/slash").acquire(Duration.ofSeconds(5))) {
            LockStatus status = locks.status("名前 with/slash");
            assertTrue(status.isHeld());
            assertEquals(h.fencingToken(), status.lastFencingToken());
            assertTrue(status.owner().orElseThrow().lease().isPresent(), "the lease's end is shown");
            assertTrue(locks.list().stream().anyMatch(s -> s.name().equals("名前 with/slash")));
            assertThrows(IllegalStateException.class, () -> locks.breakLock("名前 with/slash", false));
        }
    }

    @Test
    void aPausedServerFailsCallsByTheirDeadline() throws Exception {
        try (EtcdServer own = EtcdServer.start();
             LockProvider locks = LockProvider.open(own.kanukiUri() + "?timeout=1s")) {
            locks.lock("warm").tryAcquire().orElseThrow().close();
            own.pause();
            try {
                long start = System.nanoTime();
                LockException e = assertThrows(LockException.class, () -> locks.lock("paused").acquire(Duration.ofSeconds(1)));
                long took = (System.nanoTime() - start) / 1_000_000;
                assertTrue(took < 10_000, "acquire on a paused server took " + took + "ms");
                assertTrue(e instanceof LockBackendException || e.getMessage().contains("etcd"), e.toString());
            } finally {
                own.resume();
            }
            try (LockHandle h = locks.lock("paused").acquire(Duration.ofSeconds(10))) {
                h.verify();
            }
        }
    }

    @Test
    void aWaiterIsWokenByTheReleaseOfAnotherProvider() throws Exception {
        try (LockProvider holderSide = LockProvider.open(server.kanukiUri());
             // another scope (a trailing prefix): this JVM keeps no common queue for the two
             LockProvider waiterSide = LockProvider.open("etcd://localhost:" + server.port() + "/kanuki")) {
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

    /**
     * The waiter's backend is told of another provider's release by its watch: the notification
     * itself is checked, not how soon the waiter got the lock (a polling fallback would also get
     * it, and a loaded machine may take any time).
     */
    @Test
    void aWaitersWatchIsNotifiedOfAnotherProvidersRelease() throws Exception {
        try (LockProvider holderSide = LockProvider.open(server.kanukiUri())) {
            LockBackend waiterSide = new EtcdLockBackendFactory().create(LockUri.parse("etcd://localhost:" + server.port() + "/kanuki"));
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
