package dev.kanuki.memcached;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.MemcachedServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A name's fencing counter expires {@code fenceMargin} (plus the clock window) after its last
 * increment, later when it runs ahead of the clock, and a token issued after that is still above
 * every earlier one.
 */
@Tag("servers")
@Tag("slow")
class MemcachedFenceExpiryTest {
    private static final int NAMES = 40;
    private static MemcachedServer server;
    private static Admin admin;

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

    private static String fence(String name) {
        return MemcachedKeys.of(name).fence();
    }

    /** {@return the counter's seconds left, or -2 when it is gone} */
    private static long secondsLeft(String name) {
        MetaReply r = admin.ask("mg " + fence(name) + " t");
        return r.is("HD") ? r.number('t').orElseThrow() : -2;
    }

    @Test
    void countersOfReleasedNamesExpireAndTokensStillRise() {
        long keep = MemcachedLockBackend.fenceKeepSeconds(Duration.ofSeconds(1));
        List<Long> before = new ArrayList<>();
        try (LockProvider locks = LockProvider.open(server.kanukiUri() + "?fenceMargin=1s")) {
            for (int i = 0; i < NAMES; i++) {
                try (LockHandle h = locks.lock("expiring-" + i).tryAcquire().orElseThrow()) {
                    before.add(h.fencingToken());
                }
            }
            for (int i = 0; i < NAMES; i++) {
                // -1 (no expiry) is what a counter kept forever shows; -2: expired already (a slow machine)
                long left = secondsLeft("expiring-" + i);
                assertTrue(left == -2 || left > 0 && left <= keep,
                        "the counter of expiring-" + i + " expires: " + left + " s left");
            }
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(500)).until(() -> {
                for (int i = 0; i < NAMES; i++) {
                    if (secondsLeft("expiring-" + i) != -2) {
                        return false;
                    }
                }
                return true;
            });
            for (int i = 0; i < NAMES; i++) {
                try (LockHandle h = locks.lock("expiring-" + i).tryAcquire().orElseThrow()) {
                    long after = h.fencingToken();
                    assertTrue(after > before.get(i), "expiring-" + i + ": " + after + " > " + before.get(i));
                }
            }
        }
    }

    /**
     * A counter running ahead of the clock (made by a client whose clock was ahead) is kept until
     * the clock has passed it: forgotten after the usual expiry, the next counter would start at
     * the clock, below the tokens already given.
     */
    @Test
    void aCounterAheadOfTheClockIsKeptUntilTheClockPassedIt() {
        String name = "ahead";
        long keep = MemcachedLockBackend.fenceKeepSeconds(Duration.ofSeconds(1));
        long aheadSeconds = keep + 4;
        long before;
        try (LockProvider locks = LockProvider.open(server.kanukiUri() + "?fenceMargin=1s")) {
            admin.store(fence(name), Long.toString((System.currentTimeMillis() + aheadSeconds * 1000) * 1000), 600);
            try (LockHandle h = locks.lock(name).tryAcquire().orElseThrow()) {
                before = h.fencingToken();
            }
            long left = secondsLeft(name);
            long stillAhead = Math.floorDiv(before - System.currentTimeMillis() * 1000, 1_000_000); // read after
            assertTrue(left >= stillAhead + 1, "kept until the clock passed the token by the margin: " + left
                    + " s left, the token " + stillAhead + " s ahead of the clock");
            await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(500))
                    .until(() -> secondsLeft(name) == -2);
            try (LockHandle h = locks.lock(name).tryAcquire().orElseThrow()) {
                long after = h.fencingToken();
                assertTrue(after > before, "after the counter expired: " + after + " > " + before);
            }
        }
    }

    @Test
    void theDefaultKeepsACounterAnHourPastItsLastToken() {
        // a counter behind the clock, made to live 10 more days: the next increment sets its expiry
        admin.store(fence("default-margin"), "1000", 10 * 24 * 3600);
        try (LockProvider locks = LockProvider.open(server.kanukiUri())) {
            try (LockHandle h = locks.lock("default-margin").tryAcquire().orElseThrow()) {
                assertEquals(1001, h.fencingToken());
            }
            assertEquals(MemcachedLockBackend.fenceKeepSeconds(Duration.ofHours(1)), 3_605);
            long left = secondsLeft("default-margin");
            assertTrue(left > 3_500 && left <= 3_605, "about an hour: " + left + " s left");
            UnsupportedOperationException e = assertThrows(UnsupportedOperationException.class, () -> locks.prune(false));
            assertTrue(e.getMessage().contains("fencing counter 3605 s after its last token"), e.getMessage());
        }
    }
}
