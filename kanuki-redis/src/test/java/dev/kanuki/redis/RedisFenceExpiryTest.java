package dev.kanuki.redis;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A name's fence counter expires once the server clock has passed its last token by
 * {@code fenceMargin}, and a token issued after that is still above every earlier one.
 */
@Tag("servers")
class RedisFenceExpiryTest {
    private static final int NAMES = 40;
    private static RedisServer server;
    private static RedisClient admin;
    private static StatefulRedisConnection<String, String> connection;
    private static RedisCommands<String, String> redis;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
        admin = RedisClient.create("redis://127.0.0.1:" + server.port());
        connection = admin.connect();
        redis = connection.sync();
    }

    @AfterAll
    static void stop() {
        connection.close();
        admin.shutdown();
        server.close();
    }

    private static String uri(String margin) {
        return server.kanukiUri() + "?fenceMargin=" + margin;
    }

    @Test
    void fenceCountersOfReleasedNamesExpireAndTokensStillRise() {
        List<Long> before = new ArrayList<>();
        try (LockProvider locks = LockProvider.open(uri("1s"))) {
            for (int i = 0; i < NAMES; i++) {
                try (LockHandle h = locks.lock("expiring-" + i).tryAcquire().orElseThrow()) {
                    before.add(h.fencingToken());
                }
            }
            for (int i = 0; i < NAMES; i++) {
                // -1 (no expiry) is what a counter kept forever shows; -2: expired already (a slow machine)
                long ttl = redis.pttl(RedisKeys.of("expiring-" + i).fence());
                assertTrue(ttl == -2 || ttl > 0 && ttl <= 1_002, "the counter of expiring-" + i + " expires: pttl " + ttl);
            }
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250))
                    .until(() -> countFences() == 0);
            for (int i = 0; i < NAMES; i++) {
                try (LockHandle h = locks.lock("expiring-" + i).tryAcquire().orElseThrow()) {
                    long after = h.fencingToken();
                    assertTrue(after > before.get(i), "expiring-" + i + ": " + after + " > " + before.get(i));
                }
            }
        }
    }

    /**
     * A counter that runs ahead of the clock (a burst of tokens, or the clock stepped back) is kept
     * until the clock has passed it: forgotten earlier, the next counter would start at the clock,
     * below the tokens already given.
     */
    @Test
    void aCounterAheadOfTheClockIsKeptUntilTheClockPassedIt() {
        String name = "ahead";
        String fence = RedisKeys.of(name).fence();
        long ahead = 10_000_000; // µs
        long before;
        try (LockProvider locks = LockProvider.open(uri("1s"))) {
            redis.set(fence, Long.toString(serverMicros() + ahead));
            try (LockHandle h = locks.lock(name).tryAcquire().orElseThrow()) {
                before = h.fencingToken();
            }
            long ttl = redis.pttl(fence);
            long stillAhead = (before - serverMicros()) / 1000; // ms, read after the pttl
            assertTrue(ttl >= stillAhead + 1_000, "kept until the clock passed the token by the margin: pttl " + ttl
                    + " ms, the token " + stillAhead + " ms ahead of the clock");
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(250))
                    .until(() -> redis.exists(fence) == 0);
            try (LockHandle h = locks.lock(name).tryAcquire().orElseThrow()) {
                long after = h.fencingToken();
                assertTrue(after > before, "after the counter expired: " + after + " > " + before);
            }
        }
    }

    @Test
    void theDefaultKeepsACounterAnHourPastTheClock() {
        try (LockProvider locks = LockProvider.open(server.kanukiUri())) {
            try (LockHandle h = locks.lock("default-margin").tryAcquire().orElseThrow()) {
                h.fencingToken();
            }
            long ttl = redis.pttl(RedisKeys.of("default-margin").fence());
            assertTrue(ttl > 3_500_000 && ttl <= 3_600_002, "about an hour: pttl " + ttl);
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, () -> locks.prune(false));
            assertTrue(e.getMessage().contains("fence counter 60m (fenceMargin) after the server clock passed its last"
                    + " token"), e.getMessage());
        }
        assertEquals(-2L, (long) redis.pttl(RedisKeys.of("never-fenced").fence()), "no counter without a token");
    }

    private static long serverMicros() {
        List<String> t = redis.time();
        return Long.parseLong(t.get(0)) * 1_000_000 + Long.parseLong(t.get(1));
    }

    private static long countFences() {
        long n = 0;
        for (int i = 0; i < NAMES; i++) {
            n += redis.exists(RedisKeys.of("expiring-" + i).fence());
        }
        return n;
    }
}
