package dev.kanuki.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kanuki.testkit.MissingServerException;
import dev.kanuki.testkit.RedisServer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Redis benchmarks' sides work against a real redis-server (skipped when it is not
 * installed): each side of {@link RedisInterleaved}, {@link RedisHandoffBench}'s parties (in two
 * threads, not two JVMs) and {@link RedisContention}'s contenders do their work. Measures nothing.
 */
@Tag("servers")
@Tag("slow")
class RedisBenchSmokeTest {
    private static RedisServer server;

    @BeforeAll
    static void startServer() {
        try {
            server = RedisServer.start();
        } catch (MissingServerException e) {
            assumeTrue(false, e.getMessage());
        }
    }

    @AfterAll
    static void stopServer() {
        if (server != null) {
            server.close();
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void byHandSidesAndOneInterleavedRound() throws Exception {
        try (RedisByHand raw = new RedisByHand(server.kanukiUri())) {
            for (int i = 0; i < 3; i++) {
                raw.setNxThenDelete("smoke:raw", "v" + i); // fails unless each SET NX finds the key free again
                raw.sameScripts("smoke:{s}", "v" + i); // likewise: kanuki's release script deleted the key
            }
        }
        List<double[]> rounds = RedisInterleaved.run(server.kanukiUri(), 0, 1, 1);
        assertEquals(1, rounds.size());
        for (double micros : rounds.get(0)) {
            assertTrue(micros > 0, "every side took time");
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void handoffPartiesAlternate(@TempDir Path dir) throws Exception {
        String uri = server.kanukiUri();
        for (String kind : List.of(HandoffParty.KANUKI_URI_PREFIX + uri, RedisParties.RAW_PREFIX + uri,
                RedisParties.REDISSON_PREFIX + uri)) {
            ringInTwoThreads(kind, dir, 5);
        }
    }

    /** {@code steps} ring steps of this thread against a partner thread, each with its own party. */
    private static void ringInTwoThreads(String kind, Path dir, int steps) throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        java.util.concurrent.CountDownLatch ready = new java.util.concurrent.CountDownLatch(1);
        HandoffParty mine = HandoffParty.forProcess(kind, dir);
        HandoffRing ring = new HandoffRing(mine, 0);
        Thread partner = new Thread(() -> {
            try (HandoffParty theirs = HandoffParty.forProcess(kind, dir)) {
                HandoffRing other = new HandoffRing(theirs, 1);
                ready.countDown();
                while (!stop.get()) {
                    other.step();
                }
            } catch (Throwable t) {
                failure.set(t);
                ready.countDown();
            }
        }, "smoke-partner");
        partner.start();
        try {
            assertTrue(ready.await(30, TimeUnit.SECONDS), kind + ": the partner took its first lock");
            for (int i = 0; i < steps; i++) {
                ring.step(); // each step waits for a release by the partner
            }
        } finally {
            stop.set(true);
            mine.close(); // frees the partner's next step, after which it sees the flag
            partner.join(TimeUnit.SECONDS.toMillis(30));
        }
        if (failure.get() != null) {
            throw new AssertionError(kind + ": the partner failed", failure.get());
        }
        assertTrue(!partner.isAlive(), kind + ": the partner ended");
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void everyContenderAcquires() throws Exception {
        try (RedisContention.Contenders contenders = new RedisContention.Contenders(server.kanukiUri())) {
            for (String impl : RedisContention.IMPLS) {
                RedisContention.Tally tally = contenders.run(impl, 2, 200);
                assertTrue(tally.acquisitions() > 0, impl + " acquired");
                assertEquals(tally.acquisitions(), tally.waitNanos().length, impl + ": one wait per acquisition");
                assertEquals(tally.acquisitions(), RedisContention.Tally.decode(tally.encode()).acquisitions());
            }
        }
    }
}
