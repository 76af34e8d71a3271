package dev.kanuki.redis;

/** The Lua scripts; each runs atomically on the server in one round trip. */
final class Scripts {
    private Scripts() {
    }

    /**
     * KEYS: lock, fence. ARGV: value, lease ms. Returns {1, token} when taken, {0, pttl} when held.
     * The fence counter gets a floor of the server's clock in microseconds whenever it is created
     * (first use, or after a restart of a Redis that kept nothing, or an eviction): tokens stay
     * above any issued before, as long as fewer than one acquisition per microsecond was made on
     * the name and the server's clock does not go back.
     */
    static final String ACQUIRE = """
            if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
              local n = redis.call('INCR', KEYS[2])
              if n == 1 then
                local t = redis.call('TIME')
                n = tonumber(t[1]) * 1000000 + tonumber(t[2])
                redis.call('SET', KEYS[2], string.format('%d', n))
              end
              return {1, n}
            end
            return {0, redis.call('PTTL', KEYS[1])}
            """;

    /** KEYS: lock. ARGV: value, channel. Compare-and-delete, then wake waiters. */
    static final String RELEASE = """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              redis.call('DEL', KEYS[1])
              redis.call('PUBLISH', ARGV[2], '1')
              return 1
            end
            return 0
            """;

    /** KEYS: lock. ARGV: value, lease ms. Compare-and-PEXPIRE. */
    static final String RENEW = """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              return redis.call('PEXPIRE', KEYS[1], ARGV[2])
            end
            return 0
            """;
}
