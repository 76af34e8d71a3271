package dev.kanuki.redis;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.contract.HolderProcess;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.LockUri;
import dev.kanuki.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the contract does not show: round trips, waiting without polling, writers ahead of readers,
 * pruning of expired readers and permits, script cache loss, restarts, odd names, lost keys.
 */
@Tag("servers")
class RedisLockTest {
    private static RedisServer server;
    private static RedisClient admin;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
        admin = RedisClient.create("redis://127.0.0.1:" + server.port());
    }

    @AfterAll
    static void stop() {
        admin.shutdown();
        server.close();
    }

    private static <T> T withAdmin(java.util.function.Function<RedisCommands<String, String>, T> f) {
        try (StatefulRedisConnection<String, String> c = admin.connect()) {
            return f.apply(c.sync());
        }
    }

    @Test
    void anAcquisitionWithoutTokenIsOneBareSet() {
        try (LockProvider locks = LockProvider.open(server.kanukiUri());
             StatefulRedisConnection<String, String> c = admin.connect()) {
            locks.lock("warm-up").tryAcquire().orElseThrow().close(); // loads the release script
            c.sync().configResetstat();
            LockHandle h = locks.lock("one-trip").tryAcquire().orElseThrow();
            Map<String, Long> calls = commandCalls(c.sync().info("commandstats"));
            h.close();
            calls.keySet().removeAll(Set.of("info", "config|resetstat")); // the admin's own commands
            assertEquals(Map.of("set", 1L), calls, "an acquisition is one SET NX PX and nothing else");
            assertNull(withAdmin(r -> r.get(RedisKeys.of("one-trip").fence())), "no token was taken");
        }
    }

    @Test
    void aTokenAskedForIsIssuedOnceThenWithTheAcquisition() {
        try (LockProvider locks = LockProvider.open(server.kanukiUri());
             StatefulRedisConnection<String, String> c = admin.connect()) {
            long first;
            try (LockHandle h = locks.lock("adaptive").tryAcquire().orElseThrow()) {
                c.sync().configResetstat();
                first = h.fencingToken();
                assertEquals(first, h.fencingToken(), "the same number on every call");
                Map<String, Long> calls = commandCalls(c.sync().info("commandstats"));
                assertEquals(1L, calls.getOrDefault("evalsha", 0L) + calls.getOrDefault("eval", 0L),
                        "one script issued the token on demand: " + calls);
                assertEquals(first, locks.status("adaptive").lastFencingToken());
            }
            // its holders ask for tokens: the next acquisition takes the token in its own round trip
            c.sync().configResetstat();
            LockHandle next = locks.lock("adaptive").tryAcquire().orElseThrow();
            Map<String, Long> calls = commandCalls(c.sync().info("commandstats"));
            assertEquals(1L, calls.getOrDefault("evalsha", 0L), "one script acquired: " + calls);
            assertEquals(1L, calls.getOrDefault("incr", 0L), "and took the token: " + calls);
            c.sync().configResetstat();
            long second = next.fencingToken();
            assertEquals(0L, commandCalls(c.sync().info("commandstats")).getOrDefault("evalsha", 0L),
                    "the token came with the acquisition: asking costs nothing");
            assertTrue(second > first, second + " > " + first);
            next.close();
            // a holder that did not ask sends the name back to tokens on demand
            locks.lock("adaptive").tryAcquire().orElseThrow().close(); // eager, not asked
            c.sync().configResetstat();
            LockHandle bare = locks.lock("adaptive").tryAcquire().orElseThrow();
            Map<String, Long> bareCalls = commandCalls(c.sync().info("commandstats"));
            assertEquals(1L, bareCalls.getOrDefault("set", 0L), "bare SET again: " + bareCalls);
            assertEquals(0L, bareCalls.getOrDefault("incr", 0L), "no token taken: " + bareCalls);
            assertTrue(bare.fencingToken() > second, "tokens still rise");
            bare.close();
        }
    }

    @Test
    void aTokenAskedForAfterTheLockWasTakenAwayIsRefused() throws Exception {
        try (LockProvider locks = LockProvider.open(server.kanukiUri());
             LockProvider other = LockProvider.open("redis://localhost:" + server.port())) {
            long before;
            try (LockHandle h = locks.lock("taken-away").tryAcquire().orElseThrow()) {
                before = h.fencingToken();
            }
            locks.lock("taken-away").tryAcquire().orElseThrow().close(); // not asked: on demand again
            LockHandle h = locks.lock("taken-away").tryAcquire().orElseThrow();
            withAdmin(r -> r.del(RedisKeys.of("taken-away").lock())); // broken, or its lease ran out
            LockHandle thief = other.lock("taken-away").tryAcquire().orElseThrow();
            assertThrows(dev.kanuki.LockLostException.class, h::fencingToken);
            long thiefs = thief.fencingToken();
            assertTrue(thiefs > before, thiefs + " > " + before);
            assertEquals(thiefs, locks.status("taken-away").lastFencingToken(), "the lost holder took no number");
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
    void tokensOnDemandGrowAcrossARestartThatLostEverything() {
        try (LockProvider locks = LockProvider.open(server.kanukiUri())) {
            long before = 0;
            for (int i = 0; i < 20; i++) {
                try (LockHandle h = locks.lock("on-demand-restart").tryAcquire().orElseThrow()) {
                    before = h.fencingToken();
                }
                locks.lock("on-demand-restart").tryAcquire().orElseThrow().close(); // back to on demand
            }
            server.stop();
            server.restart();
            assertEquals(0L, (long) withAdmin(r -> r.dbsize()), "the test server keeps nothing across a restart");
            AtomicReference<LockHandle> after = new AtomicReference<>();
            await().atMost(Duration.ofSeconds(30)).ignoreExceptionsInstanceOf(LockException.class).until(() -> {
                after.set(locks.lock("on-demand-restart").tryAcquire().orElse(null));
                return after.get() != null;
            });
            try (LockHandle h = after.get()) {
                assertTrue(h.fencingToken() > before, "token on demand after the restart " + h.fencingToken()
                        + " > " + before);
            }
        }
    }

    @Test
    void aWriterCannotSetItsWayPastReaders() {
        try (LockProvider readers = LockProvider.open(server.kanukiUri());
             LockProvider writers = LockProvider.open("redis://localhost:" + server.port())) {
            LockHandle r = readers.readWriteLock("marked").readLock().acquire(Duration.ofSeconds(5));
            assertEquals(Scripts.READERS, withAdmin(a -> a.get(RedisKeys.of("marked").lock())),
                    "readers mark the lock key");
            assertTrue(writers.readWriteLock("marked").writeLock().tryAcquire().isEmpty(),
                    "the bare SET NX fails on the readers' mark");
            assertEquals(LockStatus.State.HELD_SHARED, writers.status("marked").state());
            r.close();
            assertNull(withAdmin(a -> a.get(RedisKeys.of("marked").lock())), "the last reader removes it");
            writers.readWriteLock("marked").writeLock().tryAcquire().orElseThrow().close();
        }
    }

    private static Map<String, Long> commandCalls(String info) {
        Map<String, Long> calls = new HashMap<>();
        for (String line : info.split("\r?\n")) {
            if (line.startsWith("cmdstat_")) {
                String cmd = line.substring(8, line.indexOf(':'));
                String n = line.substring(line.indexOf("calls=") + 6, line.indexOf(','));
                calls.put(cmd, Long.parseLong(n));
            }
        }
        return calls;
    }

    @Test
    void aWaiterIsWokenByTheReleaseNotByPolling() throws Exception {
        try (LockProvider holderSide = LockProvider.open(server.kanukiUri());
             // another scope (host name instead of address): this JVM then keeps no common queue for
             // the two, and the waiter contends through Redis as one in another JVM would
             LockProvider waiterSide = LockProvider.open("redis://localhost:" + server.port());
             StatefulRedisConnection<String, String> c = admin.connect()) {
            LockHandle held = holderSide.lock("woken").tryAcquire().orElseThrow();
            java.util.concurrent.CompletableFuture<LockHandle> waiting =
                    waiterSide.lock("woken").acquireAsync(Duration.ofSeconds(60));
            await().atMost(Duration.ofSeconds(30)).until(() -> !c.sync().pubsubChannels("kanuki:*").isEmpty());
            c.sync().configResetstat();
            Thread.sleep(3000); // an idle wait: the holder keeps the lock
            long attempts = commandCalls(c.sync().info("commandstats")).getOrDefault("evalsha", 0L);
            // The engine's backoff ramp alone would make a dozen attempts in the first second. The
            // acquisition script tells it how long the holder's lease still runs (up to 30 s here),
            // and a watched waiter sleeps that long unless the release's PUBLISH wakes it.
            assertTrue(attempts <= 2, attempts + " attempts during a 3 s idle wait");
            held.close();
            waiting.get(30, java.util.concurrent.TimeUnit.SECONDS).close();
        }
    }

    @Test
    void aWaiterForACrashedHolderRetriesWhenItsLeaseRunsOutNotBefore(@TempDir Path dir) throws Exception {
        Duration lease = Duration.ofSeconds(5);
        try (LockProvider waiterSide = LockProvider.open(server.kanukiUri());
             StatefulRedisConnection<String, String> c = admin.connect()) {
            HolderProcess holder = HolderProcess.start(server.kanukiUri() + "?lease=" + lease.toMillis() + "ms",
                    "crashed", "exclusive", dir.resolve("holder.err"));
            CompletableFuture<LockHandle> waiting = waiterSide.lock("crashed").acquireAsync(Duration.ofSeconds(60));
            await().atMost(Duration.ofSeconds(30)).until(() -> !c.sync().pubsubChannels("kanuki:*").isEmpty());
            c.sync().configResetstat();
            holder.kill(); // SIGKILL: no release, no PUBLISH; the key expires within the lease
            long killed = System.nanoTime();
            LockHandle got = waiting.get(30, TimeUnit.SECONDS);
            Duration waited = Duration.ofNanos(System.nanoTime() - killed);
            long attempts = commandCalls(c.sync().info("commandstats")).getOrDefault("evalsha", 0L);
            long token = got.fencingToken();
            got.close();
            assertTrue(waited.compareTo(lease.plusSeconds(3)) < 0, "served " + waited.toMillis() + " ms after the kill");
            // the backoff ramp (0.2 ms doubling to 1 s, then once a second) made 6 and more here; with
            // the holder's remaining lease as the pause: one when the key has expired, perhaps one
            // before if the holder renewed just before it was killed
            assertTrue(attempts <= 3, attempts + " attempts (EVALSHA) while waiting for a dead holder's lease");
            assertTrue(token > holder.token());
        }
    }

    @Test
    void aWriterWaitingForReadersKeepsNewReadersOut() {
        try (LockBackend backend = backend()) {
            LockRequest reader = request("starved", LockMode.SHARED, Duration.ofSeconds(30));
            Grant r1 = backend.tryAcquire(reader).orElseThrow();
            LockRequest writer = request("starved", LockMode.EXCLUSIVE, Duration.ofSeconds(30));
            assertTrue(backend.tryAcquire(writer).isEmpty(), "a writer got in beside a reader");
            assertTrue(writer.takeRetryAfter().isPresent(), "no hint: the reader's lease runs ~30 s");
            LockRequest late = request("starved", LockMode.SHARED, Duration.ofSeconds(30));
            assertTrue(backend.tryAcquire(late).isEmpty(), "a later reader overtook the waiting writer");
            assertEquals(LockStatus.State.HELD_SHARED, backend.status("starved").state());
            backend.release(r1);
            Grant w = backend.tryAcquire(writer).orElseThrow(() -> new AssertionError("the writer waited in vain"));
            assertEquals(LockStatus.State.HELD, backend.status("starved").state());
            assertTrue(backend.tryAcquire(late).isEmpty(), "a reader got in beside the writer");
            backend.release(w);
            backend.release(backend.tryAcquire(late).orElseThrow(() -> new AssertionError("readers stay out after the writer")));

            // a writer that gives up (a try without waiting, a timeout) lets readers in at once
            Grant r2 = backend.tryAcquire(request("starved", LockMode.SHARED, Duration.ofSeconds(30))).orElseThrow();
            LockRequest quitter = request("starved", LockMode.EXCLUSIVE, Duration.ofSeconds(30));
            assertTrue(backend.tryAcquire(quitter).isEmpty());
            backend.abandon(quitter);
            backend.release(backend.tryAcquire(request("starved", LockMode.SHARED, Duration.ofSeconds(30)))
                    .orElseThrow(() -> new AssertionError("a writer that gave up still keeps readers out")));
            backend.release(r2);
        }
    }

    @Test
    void expiredReadersAndPermitHoldersArePrunedByTheScripts() {
        // Short leases, but not so short that one runs out between two calls on a loaded machine.
        Duration shortLease = Duration.ofSeconds(2);
        try (LockBackend backend = backend()) {
            // one short-lived reader that never renews, beside a long-lived one that keeps the set alive
            Grant dead = backend.tryAcquire(request("pruned", LockMode.SHARED, shortLease)).orElseThrow();
            Grant alive = backend.tryAcquire(request("pruned", LockMode.SHARED, Duration.ofSeconds(30))).orElseThrow();
            assertTrue(backend.verify(dead));
            await().atMost(Duration.ofSeconds(10)).until(() -> !backend.verify(dead));
            assertTrue(!backend.renew(dead, Duration.ofSeconds(30)), "an expired reader renewed its lease");
            backend.release(alive);
            backend.release(backend.tryAcquire(request("pruned", LockMode.EXCLUSIVE, Duration.ofSeconds(30)))
                    .orElseThrow(() -> new AssertionError("an expired reader kept the writer out")));

            LockRequest first = permit("pruned", shortLease);
            Grant p1 = backend.tryAcquire(first).orElseThrow();
            Grant p2 = backend.tryAcquire(permit("pruned", Duration.ofSeconds(30))).orElseThrow();
            LockRequest third = permit("pruned", Duration.ofSeconds(30));
            assertTrue(backend.tryAcquire(third).isEmpty(), "a third permit of two");
            long hint = third.takeRetryAfter().orElseThrow().toMillis();
            assertTrue(hint > 0 && hint <= shortLease.toMillis(), "the next permit frees in " + hint + " ms, not after the longest lease");
            await().atMost(Duration.ofSeconds(10)).until(() -> backend.tryAcquire(third).isPresent());
            assertTrue(!backend.verify(p1));
            backend.release(p2);
        }
    }

    @Test
    void readersAreShownSharedListedAndBroken() throws Exception {
        try (LockProvider readers = LockProvider.open(server.kanukiUri() + "?lease=2s");
             LockProvider admin = LockProvider.open("redis://localhost:" + server.port())) {
            LockHandle r1 = readers.readWriteLock("shared-status").readLock().acquire(Duration.ofSeconds(5));
            LockStatus status = admin.status("shared-status");
            assertEquals(LockStatus.State.HELD_SHARED, status.state());
            assertEquals(ProcessHandle.current().pid(), status.owner().orElseThrow().pid(), "names a reader");
            assertEquals(r1.fencingToken(), status.lastFencingToken());
            assertTrue(admin.list().stream().anyMatch(s -> s.name().equals("shared-status")
                    && s.state() == LockStatus.State.HELD_SHARED), "the listing shows the readers");
            assertThrows(IllegalStateException.class, () -> admin.breakLock("shared-status", false));
            admin.breakLock("shared-status", true);
            assertEquals(LockStatus.State.FREE, admin.status("shared-status").state());
            r1.lost().get(30, TimeUnit.SECONDS); // its renewal finds its member gone
            r1.close();
        }
    }

    private static LockBackend backend() {
        return new RedisLockBackendFactory().create(LockUri.parse(server.kanukiUri()));
    }

    private static LockRequest request(String name, LockMode mode, Duration lease) {
        return new LockRequest(name, mode, 1, lease);
    }

    private static LockRequest permit(String name, Duration lease) {
        return new LockRequest(name, LockMode.PERMIT, 2, lease);
    }

    @Test
    void scriptCacheFlushedMeansEvalAgain() {
        try (LockProvider locks = LockProvider.open(server.kanukiUri())) {
            locks.lock("flushed").tryAcquire().orElseThrow().close();
            withAdmin(r -> r.scriptFlush());
            LockHandle h = locks.lock("flushed").tryAcquire().orElseThrow();
            withAdmin(r -> r.scriptFlush());
            h.close(); // release through EVAL as well
            assertEquals(LockStatus.State.FREE, locks.status("flushed").state());
        }
    }

    @Test
    void fencingTokensGrowAcrossARestartThatLostEverything() {
        long before;
        try (LockProvider locks = LockProvider.open(server.kanukiUri())) {
            try (LockHandle h = locks.lock("fenced").tryAcquire().orElseThrow()) {
                before = h.fencingToken();
            }
            // many acquisitions push the counter up; a restart must not bring tokens back below it
            for (int i = 0; i < 50; i++) {
                try (LockHandle h = locks.lock("fenced").tryAcquire().orElseThrow()) {
                    before = h.fencingToken();
                }
            }
            server.stop();
            server.restart();
            assertEquals(0L, (long) withAdmin(r -> r.dbsize()), "the test server keeps nothing across a restart");
            AtomicReference<Long> after = new AtomicReference<>();
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
    void hostileNamesWork() {
        String longName = "n".repeat(1024);
        List<String> names = List.of("{braces}", "a}{b", "with spaces and\ttab", "日本語 ロック", "emoji 🔒",
                "kanuki:{x}:lock", "*?[glob]", longName);
        try (LockProvider locks = LockProvider.open(server.kanukiUri())) {
            for (String name : names) {
                try (LockHandle h = locks.lock(name).tryAcquire().orElseThrow()) {
                    h.fencingToken(); // issued on demand: status shows the last token issued
                    assertTrue(locks.lock(name).tryAcquire().isEmpty(), name);
                    LockStatus status = locks.status(name);
                    assertEquals(LockStatus.State.HELD, status.state(), name);
                    assertEquals(h.fencingToken(), status.lastFencingToken(), name);
                    assertTrue(locks.list().stream().anyMatch(s -> s.name().equals(name)), name);
                }
                assertEquals(LockStatus.State.FREE, locks.status(name).state(), name);
            }
        }
    }

    @Test
    void holderLearnsItsKeyWasDeleted() throws Exception {
        try (LockProvider locks = LockProvider.open(server.kanukiUri() + "?lease=2s")) {
            LockHandle h = locks.lock("deleted").tryAcquire().orElseThrow();
            withAdmin(r -> r.del(RedisKeys.of("deleted").lock()));
            h.lost().get(30, java.util.concurrent.TimeUnit.SECONDS);
            assertTrue(!h.isHeld());
            h.close();
        }
    }

    @Test
    void serverDownIsAClearError() {
        try (RedisServer own = RedisServer.start();
             LockProvider locks = LockProvider.open(own.kanukiUri() + "?timeout=2s")) {
            locks.lock("down").tryAcquire().orElseThrow().close();
            own.kill();
            LockException e = assertThrows(LockException.class,
                    () -> locks.lock("down").tryAcquire(Duration.ofSeconds(3)));
            assertTrue(e.getMessage().contains("Redis"), e.getMessage());
        }
    }
}
