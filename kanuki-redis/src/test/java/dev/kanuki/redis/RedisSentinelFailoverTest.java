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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * What a Sentinel failover ({@code SENTINEL FAILOVER}) does to a held lock, with real processes:
 * a primary, its replica and one sentinel. The lock was replicated before the failover, so it
 * survives on the promoted replica: the holder's client follows the sentinels to the new primary
 * (Lettuce does so about 5 s after {@code +switch-master}) while the key still has most of its
 * lease there, its renewals then reach the new primary, nobody else gets the lock meanwhile, and
 * the next holder's token is higher.
 */
@Tag("servers")
@Tag("slow")
class RedisSentinelFailoverTest {
    /** Long enough that the client follows the failover before the key runs out on the new primary. */
    private static final Duration LEASE = Duration.ofSeconds(20);

    @Test
    void aReplicatedLockSurvivesAFailoverAndTokensKeepRising() throws Exception {
        String key = RedisKeys.of("failover").lock();
        try (RedisSentinel redis = RedisSentinel.start(1);
             LockProvider holderSide = LockProvider.open(redis.kanukiUri() + "?lease=" + LEASE.toMillis() + "ms");
             // another scope (host name instead of address): it contends through Redis as another JVM would
             LockProvider waiterSide = LockProvider.open(redis.kanukiUri().replace("127.0.0.1", "localhost"))) {
            RedisServer first = redis.primary();
            LockHandle held = holderSide.lock("failover").acquire(Duration.ofSeconds(10));
            long before = held.fencingToken();
            CompletableFuture<LockHandle> waiting = waiterSide.lock("failover").acquireAsync(Duration.ofSeconds(120));

            // the premise: the lock has reached the replica (replication is asynchronous, and
            // SENTINEL FAILOVER does not wait for it; the unreplicated case is in the docs' hazards)
            RedisServer replica = redis.servers().stream().filter(x -> x != first).findFirst().orElseThrow();
            await().atMost(Duration.ofSeconds(10)).until(() -> (Long) RedisSentinel.command(replica.port(), "PTTL", key) > 0);
            RedisServer promoted = redis.failover();
            assertNotEquals(first.port(), promoted.port());
            long leftAtPromotion = (Long) RedisSentinel.command(promoted.port(), "PTTL", key);
            assertTrue(leftAtPromotion > 0, "the promoted replica has the lock's key (PTTL " + leftAtPromotion + ")");
            // a renewal reaches the new primary: the key's lease there grows again
            await().atMost(LEASE).until(() -> (Long) RedisSentinel.command(promoted.port(), "PTTL", key) > leftAtPromotion);
            held.verify();
            assertTrue(held.isHeld() && !held.lost().isDone(), "the holder was told it lost a lock that survived");
            assertTrue(!waiting.isDone(), "the waiter got a lock that was still held");
            LockStatus status = waiterSide.status("failover");
            assertEquals(LockStatus.State.HELD, status.state());
            assertEquals(ProcessHandle.current().pid(), status.owner().orElseThrow().pid());

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
