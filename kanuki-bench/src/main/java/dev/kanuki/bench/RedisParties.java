package dev.kanuki.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;

/**
 * The raw and Redisson parties of {@link RedisHandoffBench}'s ring (kanuki's is
 * {@link HandoffParty.KanukiParty} through the {@code kanuki:URI} kind). Partner kinds:
 * {@code redisRaw:redis://HOST:PORT} and {@code redisson:redis://HOST:PORT}.
 */
final class RedisParties {
    /** Partner kind of {@link PubSubParty}. */
    static final String RAW_PREFIX = "redisRaw:";
    /** Partner kind of {@link RedissonParty}. */
    static final String REDISSON_PREFIX = "redisson:";

    /**
     * The lease of the raw and Redisson handoff locks: long, because a pair's main party holds its
     * lock while the other pairs open (partner JVMs start) or run their blocks, which on a very
     * busy machine took over 30 s; neither has a watchdog that would renew it (kanuki's engine
     * renews its own). The lease is only a number sent with the command: it costs nothing.
     */
    static final long LEASE_MILLIS = 600_000;

    private RedisParties() {
    }

    /**
     * @return the party of a {@code redisRaw:URI} or {@code redisson:URI} kind, or null for
     *     any other kind
     */
    static HandoffParty forKind(String kind) {
        if (kind.startsWith(RAW_PREFIX)) {
            return new PubSubParty(kind.substring(RAW_PREFIX.length()));
        }
        if (kind.startsWith(REDISSON_PREFIX)) {
            return new RedissonParty(kind.substring(REDISSON_PREFIX.length()));
        }
        return null;
    }

    /**
     * The raw pub/sub wake-up over Lettuce. To wait, a party {@code SUBSCRIBE}s to the lock's
     * channel, tries {@code SET key value NX PX}, and while that fails waits for a message (at
     * most a second, then tries again), then unsubscribes without waiting for the answer. Release
     * is compare-and-delete + {@code PUBLISH} in one script (what kanuki's release script does).
     * One command connection and one pub/sub connection per party.
     */
    static final class PubSubParty implements HandoffParty {
        private final RedisByHand redis;
        private final RedisClient pubSubClient;
        private final StatefulRedisPubSubConnection<String, String> pubSub;
        private final Semaphore[] wakeUps = new Semaphore[LOCKS];
        private final String[] values = new String[LOCKS];
        private final String id = UUID.randomUUID().toString();
        private long acquisitions;

        PubSubParty(String uri) {
            redis = new RedisByHand(uri, LEASE_MILLIS);
            pubSubClient = RedisClient.create(uri);
            pubSub = pubSubClient.connectPubSub();
            for (int i = 0; i < LOCKS; i++) {
                wakeUps[i] = new Semaphore(0);
            }
            pubSub.addListener(new RedisPubSubAdapter<>() {
                @Override
                public void message(String channel, String message) {
                    for (int i = 0; i < LOCKS; i++) {
                        if (channel.equals(channel(i))) {
                            wakeUps[i].release();
                        }
                    }
                }
            });
        }

        private static String key(int i) {
            return "raw:" + HandoffParty.lockName(i);
        }

        private static String channel(int i) {
            return "raw:" + HandoffParty.lockName(i) + ":released";
        }

        @Override
        public void lock(int i) throws InterruptedException {
            String value = id + ":" + ++acquisitions;
            pubSub.sync().subscribe(channel(i));
            wakeUps[i].drainPermits(); // a message from before the subscription is answered by the SET below
            while (!redis.setNx(key(i), value)) {
                wakeUps[i].tryAcquire(1, TimeUnit.SECONDS);
            }
            pubSub.async().unsubscribe(channel(i));
            values[i] = value;
        }

        @Override
        public void unlock(int i) {
            redis.deleteIfMineAndPublish(key(i), values[i], channel(i));
            values[i] = null;
        }

        @Override
        public void close() {
            try {
                for (int i = 0; i < LOCKS; i++) {
                    if (values[i] != null) {
                        // not unlock(i): a lock held past its lease (a stalled run) is gone already
                        redis.commands().evalsha(redis.deleteAndPublishSha(), io.lettuce.core.ScriptOutputType.INTEGER,
                                new String[] {key(i)}, values[i], channel(i));
                    }
                }
            } finally {
                pubSub.close();
                pubSubClient.shutdown(Duration.ZERO, Duration.ofSeconds(2));
                redis.close();
            }
        }
    }

    /**
     * Redisson 4.7.0 {@code RLock}s: {@code lock(lease)} (so no watchdog), {@code unlock()}.
     * Redisson waits through its own pub/sub subscription per lock.
     */
    static final class RedissonParty implements HandoffParty {
        private final RedissonClient redisson;
        private final RLock[] locks = new RLock[LOCKS];

        RedissonParty(String uri) {
            redisson = RedisInterleaved.redisson(uri);
            for (int i = 0; i < LOCKS; i++) {
                locks[i] = redisson.getLock("redisson:" + HandoffParty.lockName(i));
            }
        }

        @Override
        public void lock(int i) {
            locks[i].lock(LEASE_MILLIS, TimeUnit.MILLISECONDS);
        }

        @Override
        public void unlock(int i) {
            locks[i].unlock();
        }

        @Override
        public void close() {
            try {
                for (RLock lock : locks) {
                    if (lock.isHeldByCurrentThread()) {
                        lock.unlock();
                    }
                }
            } finally {
                redisson.shutdown();
            }
        }
    }
}
