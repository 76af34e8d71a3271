package dev.kanuki.memcached;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockLostException;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.MemcachedServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Servers that stop, restart, freeze, fill up or evict, with real memcached processes: holders
 * learn through {@code lost()}, nothing waits past its deadline, tokens keep rising.
 */
@Tag("servers")
class MemcachedFailureTest {
    private static final Duration BOUND = Duration.ofSeconds(30);

    @Test
    void aHolderLearnsItLostItsLockWhenItsServerStops() throws Exception {
        try (MemcachedServer own = MemcachedServer.start();
             LockProvider locks = LockProvider.open(own.kanukiUri() + "?lease=2s&timeout=1s")) {
            LockHandle h = locks.lock("stopped").acquire(Duration.ofSeconds(5));
            long token = h.fencingToken();
            own.stop();
            LockLostException reason = h.lost().get(BOUND.toSeconds(), TimeUnit.SECONDS);
            assertTrue(reason.getMessage().contains(own.address()), "the reason names the server: " + reason.getMessage());
            assertFalse(h.isHeld());
            assertThrows(LockLostException.class, h::verify);
            own.restart();
            h.close(); // nothing to release on the restarted server
            try (LockHandle next = locks.lock("stopped").acquire(BOUND)) {
                assertTrue(next.fencingToken() > token);
            }
        }
    }

    /**
     * A fresh server hands out CAS values from 1 again: the first lock on a restarted server can
     * get the very CAS the holder remembers from before. The holder must not take it for its own.
     */
    @Test
    void aLockOnARestartedServerIsNotTakenForTheOneBeforeTheRestart() throws Exception {
        try (MemcachedServer own = MemcachedServer.start();
             LockProvider holderSide = LockProvider.open(own.kanukiUri() + "?lease=2s");
             // another scope (a host name instead of the address): no shared queue in this JVM
             LockProvider otherSide = LockProvider.open("memcached://localhost:" + own.port())) {
            LockHandle old = holderSide.lock("reborn").acquire(Duration.ofSeconds(5));
            long oldToken = old.fencingToken(); // asked while held: tokens are issued on demand
            own.stop();
            own.restart();
            LockHandle next = await().atMost(BOUND).ignoreExceptionsInstanceOf(LockException.class)
                    .until(() -> otherSide.lock("reborn").tryAcquire().orElse(null), h -> h != null);
            assertTrue(next.fencingToken() > oldToken);
            old.lost().get(BOUND.toSeconds(), TimeUnit.SECONDS);
            assertThrows(LockLostException.class, old::verify);
            old.close();
            next.verify(); // the old holder's release left it alone
            next.close();
        }
    }

    @Test
    void aFrozenServerFailsEachCallByItsDeadlineAndHoldersLearnTheyLost() throws Exception {
        try (MemcachedServer own = MemcachedServer.start();
             LockProvider locks = LockProvider.open(own.kanukiUri() + "?lease=2s&timeout=500ms")) {
            LockHandle h = locks.lock("frozen").acquire(Duration.ofSeconds(5));
            own.pause();
            try {
                // generous bounds: the point is that nothing waits for the server to thaw
                assertTimeoutPreemptively(BOUND, () -> {
                    LockBackendException e = assertThrows(LockBackendException.class,
                            () -> locks.lock("other").tryAcquire());
                    assertTrue(e.getMessage().contains(own.address()), e.getMessage());
                    assertThrows(LockException.class, () -> locks.lock("other").acquire(Duration.ofSeconds(2)));
                    h.lost().get(BOUND.toSeconds(), TimeUnit.SECONDS);
                });
            } finally {
                own.resume();
            }
            h.close();
            await().atMost(BOUND).ignoreExceptionsInstanceOf(LockException.class)
                    .until(() -> locks.lock("other").tryAcquire().map(x -> {
                        x.close();
                        return true;
                    }).orElse(false));
        }
    }

    @Test
    void namesAreSpreadOverTwoServersAndAStoppedOneTakesOnlyItsOwn() {
        try (MemcachedServer a = MemcachedServer.start(); MemcachedServer b = MemcachedServer.start();
             Admin adminA = new Admin(a); Admin adminB = new Admin(b);
             LockProvider locks = LockProvider.open("memcached://" + a.address() + "," + b.address() + "?timeout=1s")) {
            List<String> onA = new ArrayList<>();
            List<String> onB = new ArrayList<>();
            for (int i = 0; i < 40; i++) {
                String name = "spread-" + i;
                try (LockHandle h = locks.lock(name).tryAcquire().orElseThrow()) {
                    boolean inA = adminA.lockItemExists(name);
                    boolean inB = adminB.lockItemExists(name);
                    assertTrue(inA != inB, name + " must live on exactly one server");
                    (inA ? onA : onB).add(name);
                }
            }
            assertFalse(onA.isEmpty() || onB.isEmpty(), "both servers get names: " + onA + " / " + onB);
            b.stop();
            for (String name : onA) {
                locks.lock(name).tryAcquire().orElseThrow().close();
            }
            for (String name : onB) {
                LockBackendException e = assertThrows(LockBackendException.class, () -> locks.lock(name).tryAcquire());
                assertTrue(e.getMessage().contains(b.address()), e.getMessage());
            }
        }
    }

    /**
     * memcached evicts under memory pressure (without -M), lock items included: a tiny server
     * filled with other items drops the lock and the fencing counter. The holder learns it at its
     * next renewal; the next holder's token is still higher.
     */
    @Test
    void anEvictedLockIsReportedLostAndTokensStillRise() throws Exception {
        try (MemcachedServer tiny = MemcachedServer.start(2, false); Admin admin = new Admin(tiny);
             LockProvider locks = LockProvider.open(tiny.kanukiUri() + "?lease=3s")) {
            LockHandle h = locks.lock("evicted").acquire(Duration.ofSeconds(5));
            long token = h.fencingToken();
            String fence = MemcachedKeys.of("evicted").fence();
            for (int round = 0; round < 200 && (!h.lost().isDone() || admin.keys(fence).contains(fence)); round++) {
                for (int size = 1; size <= 300; size += 13) {
                    admin.fill(200, size, true);
                }
            }
            assertTrue(h.lost().isDone(), "the evicted lock was not reported lost");
            assertFalse(admin.keys(fence).contains(fence), "the fencing counter was not evicted");
            assertThrows(LockLostException.class, h::verify);
            h.close();
            try (LockHandle next = locks.lock("evicted").acquire(BOUND)) {
                assertTrue(next.fencingToken() > token, next.fencingToken() + " after " + token);
            }
        }
    }

    /**
     * With -M a full memcached refuses new items instead of evicting: held locks stay held (a
     * renewal touches the item, allocating nothing), and a waiter's add is refused with an error
     * that leaves the holder's item alone. (memcached 1.6.18 unlinks the existing item when a meta
     * {@code ms} finds no memory, in add mode too: this test fails on an acquisition by {@code ms ME}.)
     */
    @Test
    void aFullServerWithoutEvictionKeepsHeldLocksAndRefusesNewOnes() throws Exception {
        try (MemcachedServer full = MemcachedServer.start(2, true); Admin admin = new Admin(full);
             LockProvider holderSide = LockProvider.open(full.kanukiUri() + "?lease=2s");
             LockProvider otherSide = LockProvider.open("memcached://localhost:" + full.port())) {
            LockHandle h = holderSide.lock("kept").acquire(Duration.ofSeconds(5));
            int recordBytes = admin.ask("mg " + MemcachedKeys.of("kept").lock() + " v").value().length;
            int refused = 0;
            for (int round = 0; round < 500 && refused < 100; round++) {
                refused = admin.fill(500, recordBytes, false);
            }
            assertTrue(refused >= 100, "the server never filled up");
            // another process waits for the lock: its add finds no memory
            LockBackendException e = assertThrows(LockBackendException.class, () -> otherSide.lock("kept").tryAcquire());
            assertTrue(e.hint().contains("memory"), e.getMessage());
            h.verify();
            // several renewals later, still held
            await().during(Duration.ofSeconds(3)).atMost(BOUND).until(h::isHeld);
            h.verify();
            h.close();
        }
    }
}
