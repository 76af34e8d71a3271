package dev.kanuki.bench;

import io.lettuce.core.RedisClient;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.SetArgs;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;

/**
 * Redis locks by hand over raw Lettuce (the client kanuki-redis uses), one synchronous
 * connection: the floors the Redis benchmarks compare kanuki with.
 *
 * <ul>
 *   <li>{@link #setNxThenDelete}: the least a Redis lock needs, {@code SET key value NX PX lease}
 *       then an {@code EVALSHA} compare-and-delete. Two round trips, no fencing token, nobody
 *       woken.</li>
 *   <li>{@link #sameScripts}: kanuki-redis's own commands for a lock whose holder does not ask
 *       for a fencing token: the bare {@code SET NX PX}, then its release script (read from its
 *       {@code Scripts}, so it stays what kanuki sends: compare-and-delete + {@code PUBLISH}). The
 *       same server work as kanuki's {@code tryAcquire()} + {@code close()}, without kanuki's
 *       backend and engine, so {@code kanuki/raw = same/raw × kanuki/same}.</li>
 * </ul>
 */
final class RedisByHand implements AutoCloseable {
    /** The lease every raw lock is set with, as kanuki's default lease. */
    static final long LEASE_MILLIS = 30_000;

    /** Compare-and-delete. KEYS: lock. ARGV: value. */
    static final String DELETE_IF_MINE = """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              return redis.call('DEL', KEYS[1])
            end
            return 0
            """;

    /** Compare-and-delete, then {@code PUBLISH}: the raw pub/sub lock's release. KEYS: lock. ARGV: value, channel. */
    static final String DELETE_IF_MINE_AND_PUBLISH = """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              redis.call('DEL', KEYS[1])
              redis.call('PUBLISH', ARGV[2], '1')
              return 1
            end
            return 0
            """;

    /**
     * kanuki-redis's release script (compare-and-delete or remove a member, then {@code PUBLISH}).
     * KEYS: the grant's key. ARGV: mode, value, channel.
     */
    static final String KANUKI_RELEASE = kanukiScript("RELEASE");

    private static final String LEASE = Long.toString(LEASE_MILLIS);

    private final RedisClient client;
    private final StatefulRedisConnection<String, String> connection;
    private final RedisCommands<String, String> redis;
    private final String deleteSha;
    private final String deleteAndPublishSha;
    private final String kanukiReleaseSha;
    private final SetArgs setNx;

    /** Connects to {@code redis://host:port} and loads the scripts; locks get {@link #LEASE_MILLIS}. */
    RedisByHand(String uri) {
        this(uri, LEASE_MILLIS);
    }

    /** Connects to {@code redis://host:port} and loads the scripts; {@link #setNx} sets {@code leaseMillis}. */
    RedisByHand(String uri, long leaseMillis) {
        setNx = SetArgs.Builder.nx().px(leaseMillis);
        client = RedisClient.create(uri);
        try {
            connection = client.connect();
        } catch (RuntimeException e) {
            client.shutdown(Duration.ZERO, Duration.ofSeconds(1));
            throw e;
        }
        redis = connection.sync();
        deleteSha = redis.scriptLoad(DELETE_IF_MINE);
        deleteAndPublishSha = redis.scriptLoad(DELETE_IF_MINE_AND_PUBLISH);
        kanukiReleaseSha = redis.scriptLoad(KANUKI_RELEASE);
    }

    /** The connection's synchronous commands, for parties that build on this one. */
    RedisCommands<String, String> commands() {
        return redis;
    }

    /** The SHA-1 of {@link #DELETE_IF_MINE_AND_PUBLISH}, loaded on this connection's server. */
    String deleteAndPublishSha() {
        return deleteAndPublishSha;
    }

    /**
     * {@code SET key value NX PX lease}.
     *
     * @return whether the lock was free and is now ours
     */
    boolean setNx(String key, String value) {
        return "OK".equals(redis.set(key, value, setNx));
    }

    /**
     * Compare-and-delete.
     *
     * @throws IllegalStateException when the key did not hold {@code value}
     */
    void deleteIfMine(String key, String value) {
        Long deleted = redis.evalsha(deleteSha, ScriptOutputType.INTEGER, new String[] {key}, value);
        if (deleted == null || deleted != 1) {
            throw new IllegalStateException("compare-and-delete of " + key + " found another value");
        }
    }

    /**
     * Compare-and-delete, then {@code PUBLISH channel 1}, in one script.
     *
     * @throws IllegalStateException when the key did not hold {@code value}
     */
    void deleteIfMineAndPublish(String key, String value, String channel) {
        Long deleted = redis.evalsha(deleteAndPublishSha, ScriptOutputType.INTEGER, new String[] {key}, value, channel);
        if (deleted == null || deleted != 1) {
            throw new IllegalStateException("compare-and-delete of " + key + " found another value");
        }
    }

    /**
     * Takes and gives back one lock: {@code SET NX PX}, then compare-and-delete.
     *
     * @throws IllegalStateException when the lock was taken
     */
    void setNxThenDelete(String key, String value) {
        if (!setNx(key, value)) {
            throw new IllegalStateException(key + " is taken");
        }
        deleteIfMine(key, value);
    }

    /**
     * kanuki's commands by hand for a holder that does not ask for a token: the bare
     * {@code SET NX PX}, then kanuki's release script (compare-and-delete and publish).
     *
     * @throws IllegalStateException when the lock was taken
     */
    void sameScripts(String tag, String value) {
        String key = tag + ":lock";
        if (!setNx(key, value)) {
            throw new IllegalStateException(key + " is taken");
        }
        Long deleted = redis.evalsha(kanukiReleaseSha, ScriptOutputType.INTEGER,
                new String[] {key, tag + ":fence", tag + ":queue"}, "x", value,
                tag + ":released");
        if (deleted == null || deleted != 1) {
            throw new IllegalStateException("kanuki's release of " + key + " found another value");
        }
    }

    /** A script of kanuki-redis's package-private {@code Scripts}, as kanuki sends it. */
    private static String kanukiScript(String field) {
        try {
            java.lang.reflect.Field f = Class.forName("dev.kanuki.redis.Scripts").getDeclaredField(field);
            f.setAccessible(true);
            // with the fence counter's margin put in, as kanuki does when it loads its scripts
            // (the default fenceMargin, 1 h)
            return ((String) f.get(null)).replace("@FENCE_MARGIN_MS@", Long.toString(Duration.ofHours(1).toMillis()));
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("kanuki-redis has no Scripts." + field + " any more: update RedisByHand", e);
        }
    }

    @Override
    public void close() {
        connection.close();
        client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
    }
}
