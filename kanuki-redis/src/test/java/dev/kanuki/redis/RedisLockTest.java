package dev.kanuki.redis;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** What the contract does not show: round trips, script cache loss, restarts, odd names, lost keys. */
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
    void acquisitionIsOneScriptCall() {
        try (LockProvider locks = LockProvider.open(server.kanukiUri());
             StatefulRedisConnection<String, String> c = admin.connect()) {
            locks.lock("warm-up").tryAcquire().orElseThrow().close(); // loads the script
            c.sync().configResetstat();
            LockHandle h = locks.lock("one-trip").tryAcquire().orElseThrow();
            Map<String, Long> calls = commandCalls(c.sync().info("commandstats"));
            h.close();
            // what the scripts call inside, and the admin's own commands, are not client round trips
            calls.keySet().removeAll(Set.of("set", "incr", "time", "info", "config|resetstat"));
            assertEquals(Map.of("evalsha", 1L), calls, "an acquisition is one EVALSHA and nothing else");
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
            // Polling at the engine's 5 ms default would make hundreds; a watched waiter retries about
            // once a second for a holder that might have died.
            assertTrue(attempts < 20, attempts + " attempts during a 3 s idle wait");
            held.close();
            waiting.get(30, java.util.concurrent.TimeUnit.SECONDS).close();
        }
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
