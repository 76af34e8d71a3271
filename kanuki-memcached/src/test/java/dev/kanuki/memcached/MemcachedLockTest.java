package dev.kanuki.memcached;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockLostException;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.contract.HolderProcess;
import dev.kanuki.spi.BackendProviders;
import dev.kanuki.testkit.MemcachedServer;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What the contract does not show: round trips, fencing across restarts and lost counters, odd names, a paused holder. */
@Tag("servers")
class MemcachedLockTest {
    private static MemcachedServer server;
    private static Admin admin;

    @TempDir
    Path tempDir;

    @BeforeAll
    static void start() {
        server = MemcachedServer.start();
        admin = new Admin(server);
    }

    @AfterAll
    static void stop() {
        admin.close();
        server.close();
    }

    @Test
    void anAcquisitionIsOneRoundTripAndAReleaseOneMore() {
        MemcachedNode node = new MemcachedNode(server.host(), server.port(), Duration.ofSeconds(5));
        try (LockProvider locks = BackendProviders.open(server.kanukiUri(),
                new MemcachedLockBackend(List.of(node), Duration.ofSeconds(5)))) {
            locks.lock("warm-up").tryAcquire().orElseThrow().close(); // connects
            long before = node.roundTrips();
            LockHandle h = locks.lock("one-trip").tryAcquire().orElseThrow();
            assertEquals(1, node.roundTrips() - before, "add and CAS read: one write, one wait");
            h.close();
            assertEquals(2, node.roundTrips() - before, "a release is one compare-and-delete");
            assertEquals("EN", admin.ask("mg " + MemcachedKeys.of("one-trip").fence() + " v").code(),
                    "no token asked for, no counter touched");
        }
    }

    @Test
    void aTokenAskedForIsIssuedInOneRoundTripThenWithTheAcquisition() {
        MemcachedNode node = new MemcachedNode(server.host(), server.port(), Duration.ofSeconds(5));
        try (LockProvider locks = BackendProviders.open(server.kanukiUri(),
                new MemcachedLockBackend(List.of(node), Duration.ofSeconds(5)))) {
            long first;
            try (LockHandle h = locks.lock("adaptive").tryAcquire().orElseThrow()) {
                long before = node.roundTrips();
                first = h.fencingToken();
                assertEquals(first, h.fencingToken(), "the same number on every call");
                assertEquals(1, node.roundTrips() - before, "increment and check: one round trip, once");
                assertEquals(first, locks.status("adaptive").lastFencingToken());
            }
            long before = node.roundTrips();
            long second;
            try (LockHandle h = locks.lock("adaptive").tryAcquire().orElseThrow()) {
                second = h.fencingToken();
                assertEquals(1, node.roundTrips() - before, "its holders ask: the token came with the acquisition");
            }
            assertTrue(second > first, second + " > " + first);
            locks.lock("adaptive").tryAcquire().orElseThrow().close(); // took a token, did not ask for it
            String counter = admin.ask("mg " + MemcachedKeys.of("adaptive").fence() + " v").text().trim();
            before = node.roundTrips();
            LockHandle bare = locks.lock("adaptive").tryAcquire().orElseThrow();
            assertEquals(counter, admin.ask("mg " + MemcachedKeys.of("adaptive").fence() + " v").text().trim(),
                    "a holder that did not ask sends the name back to tokens on demand");
            assertTrue(bare.fencingToken() > second, "tokens still rise");
            bare.close();
        }
    }

    @Test
    void aTokenAskedForAfterTheLockWasTakenAwayIsRefused() {
        try (LockProvider locks = LockProvider.open(server.kanukiUri());
             LockProvider other = LockProvider.open(server.kanukiUri().replace("127.0.0.1", "localhost"))) {
            LockHandle h = locks.lock("taken-away").tryAcquire().orElseThrow();
            admin.ask("md " + MemcachedKeys.of("taken-away").lock()); // broken, evicted, or its lease ran out
            LockHandle thief = other.lock("taken-away").tryAcquire().orElseThrow();
            assertThrows(LockLostException.class, h::fencingToken);
            long thiefs = thief.fencingToken();
            assertEquals(thiefs, locks.status("taken-away").lastFencingToken());
            thief.close();
            h.close();
        }
    }

    @Test
    void aTokenFirstAskedForAfterCloseIsRefused() {
        try (LockProvider locks = LockProvider.open(server.kanukiUri())) {
            LockHandle h = locks.lock("closed-first").tryAcquire().orElseThrow();
            h.close();
            assertThrows(IllegalStateException.class, h::fencingToken);
            LockHandle asked = locks.lock("closed-first").tryAcquire().orElseThrow();
            long token = asked.fencingToken();
            asked.close();
            assertEquals(token, asked.fencingToken(), "a token asked for while held stays readable after close");
        }
    }

    @Test
    void aTokenAskedForAfterARestartIsRefusedAndTokensOnDemandStillRise() {
        try (MemcachedServer own = MemcachedServer.start(); LockProvider locks = LockProvider.open(own.kanukiUri())) {
            long before = 0;
            for (int i = 0; i < 20; i++) {
                try (LockHandle h = locks.lock("on-demand").tryAcquire().orElseThrow()) {
                    before = h.fencingToken();
                }
                locks.lock("on-demand").tryAcquire().orElseThrow().close(); // back to on demand
            }
            LockHandle held = locks.lock("on-demand").tryAcquire().orElseThrow();
            own.stop();
            own.restart();
            assertThrows(LockException.class, held::fencingToken, "the restarted server has no lock of ours");
            held.close();
            java.util.concurrent.atomic.AtomicReference<LockHandle> after = new java.util.concurrent.atomic.AtomicReference<>();
            await().atMost(Duration.ofSeconds(30)).ignoreExceptionsInstanceOf(LockException.class).until(() -> {
                after.set(locks.lock("on-demand").tryAcquire().orElse(null));
                return after.get() != null;
            });
            try (LockHandle h = after.get()) {
                assertTrue(h.fencingToken() > before, "token on demand after the restart " + h.fencingToken()
                        + " > " + before);
            }
        }
    }

    @Test
    void fencingTokensRiseAcrossAServerRestartThatLostEverything() {
        try (MemcachedServer own = MemcachedServer.start(); LockProvider locks = LockProvider.open(own.kanukiUri())) {
            long before = 0;
            for (int i = 0; i < 50; i++) {
                try (LockHandle h = locks.lock("fenced").tryAcquire().orElseThrow()) {
                    assertTrue(h.fencingToken() > before);
                    before = h.fencingToken();
                }
            }
            own.stop();
            own.restart();
            try (Admin fresh = new Admin(own)) {
                assertTrue(fresh.keys("kanuki.").isEmpty(), "the restarted server kept items");
            }
            AtomicLong after = new AtomicLong();
            await().atMost(Duration.ofSeconds(30)).ignoreExceptionsInstanceOf(LockException.class).until(() -> {
                Optional<LockHandle> h = locks.lock("fenced").tryAcquire();
                h.ifPresent(x -> {
                    after.set(x.fencingToken());
                    x.close();
                });
                return h.isPresent();
            });
            assertTrue(after.get() > before, "token after the restart " + after.get() + " > " + before);
        }
    }

    @Test
    void fencingTokensRiseAcrossADeletedCounter() {
        try (LockProvider locks = LockProvider.open(server.kanukiUri())) {
            long before;
            try (LockHandle h = locks.lock("counter-gone").tryAcquire().orElseThrow()) {
                before = h.fencingToken();
            }
            admin.deleteCounter("counter-gone");
            try (LockHandle h = locks.lock("counter-gone").tryAcquire().orElseThrow()) {
                assertTrue(h.fencingToken() > before, h.fencingToken() + " after " + before);
                assertEquals(h.fencingToken(), locks.status("counter-gone").lastFencingToken());
            }
        }
    }

    @Test
    void hostileNamesWorkWithStatusAndList() {
        List<String> names = List.of("with spaces and\ttab", "line\r\nend", "日本語 ロック", "emoji 🔒", "kanuki.lock.0",
                "%41 percent", "n".repeat(1024));
        try (LockProvider locks = LockProvider.open(server.kanukiUri())) {
            for (String name : names) {
                try (LockHandle h = locks.lock(name).tryAcquire().orElseThrow()) {
                    h.fencingToken(); // issued on demand: status shows the last token issued
                    assertTrue(locks.lock(name).tryAcquire().isEmpty(), name);
                    LockStatus status = locks.status(name);
                    assertEquals(LockStatus.State.HELD, status.state(), name);
                    assertEquals(ProcessHandle.current().pid(), status.owner().orElseThrow().pid());
                    assertTrue(status.owner().orElseThrow().leaseUntil() != null, "the lease end is known");
                    assertEquals(h.fencingToken(), status.lastFencingToken(), name);
                    assertTrue(locks.list().stream().anyMatch(s -> s.name().equals(name) && s.isHeld()), name);
                }
                assertEquals(LockStatus.State.FREE, locks.status(name).state(), name);
                assertTrue(locks.list().stream().noneMatch(s -> s.name().equals(name)), name);
            }
        }
    }

    @Test
    void aForeignItemUnderALockKeyIsHeldBySomeoneUnknownAndCanBeBroken() {
        String name = "foreign";
        admin.store(MemcachedKeys.of(name).lock(), "written by another program", 60);
        try (LockProvider locks = LockProvider.open(server.kanukiUri())) {
            assertTrue(locks.lock(name).tryAcquire().isEmpty());
            LockStatus status = locks.status(name);
            assertEquals(LockStatus.State.HELD, status.state());
            assertTrue(status.owner().isEmpty(), "no owner record to read");
            assertEquals(LockStatus.State.HELD, locks.breakLock(name, true).state());
            locks.lock(name).tryAcquire().orElseThrow().close();
        }
    }

    /**
     * A holder frozen past its lease (SIGSTOP: a long GC pause, a suspended VM) loses the lock to the
     * next process, whose token is higher; when it thaws, its release must not delete the new
     * holder's lock.
     */
    @Test
    void aHolderPausedPastItsLeaseLosesItAndItsReleaseSparesTheNextHolder() throws Exception {
        String uri = server.kanukiUri() + "?lease=2s";
        try (LockProvider locks = LockProvider.open(uri)) {
            HolderProcess holder = HolderProcess.start(uri, "paused", "exclusive", tempDir.resolve("holder.err"));
            LockHandle next;
            signal(holder.pid(), "STOP");
            try {
                next = locks.lock("paused").acquire(Duration.ofSeconds(30));
                assertTrue(next.fencingToken() > holder.token(), "the next holder's token is higher");
            } finally {
                signal(holder.pid(), "CONT");
            }
            holder.close(); // it releases (or finds its lock lost first) and exits
            assertTrue(next.isHeld());
            next.verify();
            assertEquals(ProcessHandle.current().pid(), locks.status("paused").owner().orElseThrow().pid());
            next.close();
        }
    }

    private static void signal(long pid, String signal) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS));
        assertEquals(0, kill.exitValue());
    }

    @Test
    void aLockItemDeletedBehindItsHolderIsReportedLost() throws Exception {
        try (LockProvider locks = LockProvider.open(server.kanukiUri() + "?lease=2s")) {
            LockHandle h = locks.lock("deleted").tryAcquire().orElseThrow();
            admin.ask("md " + MemcachedKeys.of("deleted").lock());
            h.lost().get(30, TimeUnit.SECONDS);
            assertFalse(h.isHeld());
            h.close();
        }
    }
}
