package dev.kanuki.redis;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.testkit.RedisSentinel;
import dev.kanuki.testkit.RedisServer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What a Sentinel failover does to a held lock, with real processes: a primary, its replica and
 * one sentinel. The lock was replicated before the failover, so it survives on the promoted
 * replica: the holder keeps it (its renewals reach the new primary once the client has asked the
 * sentinel again), nobody else gets it meanwhile, and the next holder's token is higher.
 */
class RedisSentinelFailoverTest {
    private static final Duration LEASE = Duration.ofSeconds(6);

    @Test
    void aReplicatedLockSurvivesAFailoverAndTokensKeepRising() throws Exception {
        try (RedisSentinel redis = RedisSentinel.start(1);
             LockProvider holderSide = LockProvider.open(redis.kanukiUri() + "?lease=" + LEASE.toMillis() + "ms");
             // another scope (host name instead of address): it contends through Redis as another JVM would
             LockProvider waiterSide = LockProvider.open(redis.kanukiUri().replace("127.0.0.1", "localhost"))) {
            RedisServer first = redis.primary();
            LockHandle held = holderSide.lock("failover").acquire(Duration.ofSeconds(10));
            long before = held.fencingToken();
            CompletableFuture<LockHandle> waiting = waiterSide.lock("failover").acquireAsync(Duration.ofSeconds(120));

            RedisServer promoted = redis.failover();
            assertNotEquals(first.port(), promoted.port());
            assertEquals(1L, RedisSentinel.command(promoted.port(), "EXISTS", RedisKeys.of("failover").lock()),
                    "the promoted replica has the lock's key");
            // the holder's client finds the new primary through the sentinel; then verify() reaches it
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
                held.verify();
                return true;
            });
            // two leases on the new primary: renewed there, never lost, never granted to the waiter
            await().during(LEASE.multipliedBy(2)).atMost(LEASE.multipliedBy(4))
                    .until(() -> held.isHeld() && !waiting.isDone());
            assertEquals(LockStatus.State.HELD, waiterSide.status("failover").state());
            assertEquals(ProcessHandle.current().pid(), waiterSide.status("failover").owner().orElseThrow().pid());

            held.close();
            LockHandle next = waiting.get(60, TimeUnit.SECONDS);
            try {
                assertTrue(next.fencingToken() > before, next.fencingToken() + " > " + before);
            } finally {
                next.close();
            }
        }
    }
}
