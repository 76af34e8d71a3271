package dev.kanuki.redis;

/**
 * The Lua scripts; each runs atomically on the server in one round trip. Every key a script
 * touches carries the name's hash tag ({@link RedisKeys}), so a cluster never splits them.
 *
 * <p>Holders of a shared lock and of semaphore permits are members of a sorted set, scored by
 * the time their lease runs out (server {@code TIME}, in ms): the scripts drop expired members
 * with {@code ZREMRANGEBYSCORE} before they count, so a crashed holder's place frees itself.
 */
final class Scripts {
    private Scripts() {
    }

    /** A script with the shared pieces put in: {@code @READERS@}, {@code @NEXT_TOKEN@}, {@code @HAND_OVER@}. */
    private static String lua(String script) {
        return script.replace("@HAND_OVER@", HAND_OVER).replace("@READERS@", READERS)
                .replace("@NEXT_TOKEN@", NEXT_TOKEN);
    }

    /**
     * {@return the script with the fence counter's margin put in} (the {@code @FENCE_MARGIN_MS@} of
     * {@link #NEXT_TOKEN}; scripts without it are returned as they are).
     */
    static String withFenceMargin(String script, long marginMillis) {
        return script.replace("@FENCE_MARGIN_MS@", Long.toString(marginMillis));
    }

    /** How long past the holder's remaining lease a waiter's place in line lasts without a new attempt, in ms. */
    static final long PLACE_KEPT_MILLIS = 10_000;

    /**
     * The value of the lock key while readers hold the name: no owner record (those have five
     * tab-separated fields), so {@code status} and {@code list} never show it as an exclusive
     * holder. It keeps the lock key present as long as any reader's lease runs, which is what lets
     * an exclusive acquisition be a bare {@code SET NX PX}: that fails while readers are in.
     */
    static final String READERS = "kanuki:readers";

    /**
     * Takes the name's next fencing token; expects {@code t}, the server's {@code TIME}, and
     * KEYS[2], the fence counter. The counter never falls below the server's clock in
     * microseconds: a token is the larger of the counter plus one and the clock. So tokens keep
     * rising where the counter itself goes back: a restart of a Redis that kept nothing, an
     * eviction, or a failover to a replica that had not yet received the last increments, as long
     * as the name got fewer than one token per microsecond and the (new) server's clock is not
     * behind the time the last token was issued.
     *
     * <p>So the counter is needed only until the clock has passed the last token: each bump sets
     * its expiry to how far it runs ahead of the clock plus a margin ({@code @FENCE_MARGIN_MS@},
     * the URI option {@code fenceMargin}), the server clock step back that tokens survive after
     * the counter is gone. A name no longer used leaves no key behind.
     */
    private static final String NEXT_TOKEN = """
            local function nextToken()
              local n = redis.call('INCR', KEYS[2])
              local floor = tonumber(t[1]) * 1000000 + tonumber(t[2])
              if n < floor then
                n = floor
                redis.call('SET', KEYS[2], string.format('%d', n))
              end
              redis.call('PEXPIRE', KEYS[2], math.floor((n - floor) / 1000) + 1 + @FENCE_MARGIN_MS@)
              return n
            end
            """;

    /**
     * Hands an exclusive lock its holder just released to the first waiter in line that still
     * listens; expects the variable {@code t} declared, {@code nextToken}, KEYS[1] the lock and
     * KEYS[2] the fence. The line is a list of entries in order of arrival, each
     * {@code inbox TAB id TAB lease TAB fence TAB value} ({@link RedisLockBackend} makes them):
     * the waiter's backend's inbox channel, its waiter id, the lease it asked for, whether it takes
     * a token with the lock ({@code 1}), and its owner record. The lock key is set to the waiter's
     * value with its lease, and {@code token TAB id TAB value} published on its inbox (token 0:
     * issued on demand later). {@code PUBLISH} answers how many clients got it; none means the
     * waiter's process is gone (its connection closed), and the next entry is tried. With nobody
     * in line the lock key is deleted and the release published on the name's channel, which
     * wakes every waiter. Few commands on purpose: this runs inside every contended release, and
     * the waiter hears of it only once the script has ended.
     */
    private static final String HAND_OVER = """
            local function handOver(queue, channel)
              local entry = redis.call('LPOP', queue)
              while entry do
                local inbox, id, lease, fence, value = string.match(entry, '^([^\t]+)\t([^\t]+)\t(%d+)\t(%d)\t(.*)$')
                if inbox then
                  redis.call('SET', KEYS[1], value, 'PX', lease)
                  local token = 0
                  if fence == '1' then
                    t = redis.call('TIME')
                    token = nextToken()
                  end
                  if redis.call('PUBLISH', inbox, string.format('%d', token) .. '\t' .. id .. '\t' .. value) > 0 then
                    return true
                  end
                end
                entry = redis.call('LPOP', queue)
              end
              redis.call('DEL', KEYS[1])
              redis.call('PUBLISH', channel, '1')
              return false
            end
            """;

    /**
     * KEYS: lock, fence, shared, permits, intent, queue. ARGV: mode ({@code x} exclusive, {@code s}
     * shared, {@code p} permit), value, lease ms, permits, and for {@code x} whether to take a
     * fencing token ({@code 1}) or leave it to be issued on demand ({@code 0}; shared and permit
     * acquisitions always take one), and the line entry of an exclusive request that waits if it
     * cannot have the lock now (see {@code HAND_OVER}; empty: it does not wait, or cannot be told). Returns {1, token} when taken (token 0 when not taken), or
     * {0, ms} when not: how long until the lock can become free without a release (the holder's
     * remaining lease; -1 when the key has no expiry), with a third element 1 when the request
     * left an intent key.
     *
     * <p>An uncontended exclusive acquisition is a bare {@code SET NX PX} instead, or
     * {@link #SET_WITH_TOKEN} for a name whose holders ask for tokens ({@link RedisLockBackend});
     * this script is the path of a contended name and of a writer that left an intent.
     *
     * <p>An exclusive request that finds the name held and gives an entry takes a place at the end
     * of the line, once (its later attempts find the entry there): the holder's release hands the
     * lock to the first in line ({@code HAND_OVER}), so a waiter gets it without an attempt of
     * its own. Each refused attempt sets the line's expiry to twice the holder's remaining lease plus
     * {@value #PLACE_KEPT_MILLIS} ms (a waiter attempts again within the holder's remaining lease),
     * so a line nobody waits in any more goes away. An attempt
     * that finds the lock already handed to it (the grant's message not yet read) takes it, with a
     * fresh lease.
     *
     * <p>An exclusive request that finds readers leaves an intent key (its value, for its lease):
     * new readers stay out while it exists, so a writer is not starved by a stream of readers in
     * other processes. The writer removes it when it gets in; {@code DROP_INTENT} when it gives up.
     * Readers keep the lock key at {@link #READERS} for as long as the longest reader lease runs.
     */
    static final String ACQUIRE = lua("""
            local mode, value, lease = ARGV[1], ARGV[2], tonumber(ARGV[3])
            local function queueUp(left)
              if ARGV[6] ~= '' then
                if not redis.call('LPOS', KEYS[6], ARGV[6]) then
                  redis.call('RPUSH', KEYS[6], ARGV[6])
                end
                redis.call('PEXPIRE', KEYS[6], 2 * math.max(left, 0) + @PLACE_KEPT@)
              end
            end
            local current
            if mode ~= 'p' then
              -- the common refusal first, with the fewest commands: held by another
              current = redis.call('GET', KEYS[1])
              if current and current ~= '@READERS@' and current ~= value then
                local left = redis.call('PTTL', KEYS[1])
                if mode == 'x' then
                  queueUp(left)
                end
                return {0, left}
              end
            end
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            @NEXT_TOKEN@
            local function leaveLine()
              if ARGV[6] ~= '' then
                redis.call('LREM', KEYS[6], 1, ARGV[6])
              end
            end
            local function took()
              if ARGV[5] == '1' then
                return {1, nextToken()}
              end
              return {1, 0}
            end
            local function join(set)
              redis.call('ZADD', set, now + lease, value)
              if redis.call('PTTL', set) < lease then
                redis.call('PEXPIRE', set, lease)
              end
              return {1, nextToken()}
            end
            local function firstLeft(set, index)
              local m = redis.call('ZRANGE', set, index, index, 'WITHSCORES')
              return math.max(1, tonumber(m[2]) - now)
            end
            if mode == 'p' then
              redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', now)
              if redis.call('ZSCORE', KEYS[4], value) or redis.call('ZCARD', KEYS[4]) < tonumber(ARGV[4]) then
                return join(KEYS[4])
              end
              return {0, firstLeft(KEYS[4], 0)}
            end
            if mode == 'x' and current == value then
              redis.call('PEXPIRE', KEYS[1], lease)
              leaveLine()
              return took()
            end
            redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
            if mode == 's' then
              local writer = redis.call('PTTL', KEYS[5])
              if writer ~= -2 then
                return {0, writer}
              end
              if redis.call('PTTL', KEYS[1]) < lease then
                redis.call('SET', KEYS[1], '@READERS@', 'PX', lease)
              end
              return join(KEYS[3])
            end
            if redis.call('ZCARD', KEYS[3]) > 0 then
              redis.call('SET', KEYS[5], value, 'PX', lease)
              local left = firstLeft(KEYS[3], -1)
              queueUp(left)
              return {0, left, 1}
            end
            redis.call('SET', KEYS[1], value, 'PX', lease)
            if redis.call('GET', KEYS[5]) == value then
              redis.call('DEL', KEYS[5])
            end
            leaveLine()
            return took()
            """).replace("@PLACE_KEPT@", Long.toString(PLACE_KEPT_MILLIS));

    /**
     * KEYS: lock, fence. ARGV: value, lease ms. The uncontended exclusive acquisition of a name
     * whose holders ask for tokens: {@code SET NX PX} and, when it stored, the next token, in one
     * round trip. Returns the token, or -1 when the key exists (held, or readers' mark): then
     * {@link #ACQUIRE} runs.
     */
    static final String SET_WITH_TOKEN = lua("""
            if not redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
              return -1
            end
            local t = redis.call('TIME')
            @NEXT_TOKEN@
            return nextToken()
            """);

    /**
     * KEYS: lock, fence. ARGV: value. The fencing token of an exclusive holder that acquired
     * without one, issued on demand: the next token while the lock key still holds our value,
     * else -1 (the lock was lost, and no number is taken). Since the token is taken while the lock
     * is ours, and the next holder can only take one after our key is gone, tokens rise from
     * holder to holder whichever of them asked on demand and whichever with the acquisition.
     */
    static final String TOKEN = lua("""
            if redis.call('GET', KEYS[1]) ~= ARGV[1] then
              return -1
            end
            local t = redis.call('TIME')
            @NEXT_TOKEN@
            return nextToken()
            """);

    /**
     * KEYS: for an exclusive grant lock, fence, queue; for a reader the shared set and
     * the lock; for a permit the permit set. ARGV: mode, value, channel. Compare-and-delete (or
     * remove our member), then for an exclusive lock hand it to the first waiter in line
     * ({@code HAND_OVER}), else wake waiters on the channel. The last live reader out removes the
     * readers' mark on the lock key, so that a writer's bare {@code SET NX} gets in at once.
     */
    static final String RELEASE = lua("""
            local t, now
            @NEXT_TOKEN@
            @HAND_OVER@
            if ARGV[1] == 'x' then
              if redis.call('GET', KEYS[1]) == ARGV[2] then
                handOver(KEYS[3], ARGV[3])
                return 1
              end
              return 0
            end
            local gone = redis.call('ZREM', KEYS[1], ARGV[2]) == 1
            if gone and ARGV[1] == 's' and redis.call('GET', KEYS[2]) == '@READERS@' then
              t = redis.call('TIME')
              now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
              if redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf') == 0 then
                redis.call('DEL', KEYS[2])
              end
            end
            if gone then
              redis.call('PUBLISH', ARGV[3], '1')
              return 1
            end
            return 0
            """);

    /**
     * KEYS: lock, fence, queue. ARGV: the waiter's line entry, its value, channel. An exclusive
     * waiter gave up: it leaves the line, and when the lock was handed to it meanwhile, it passes
     * the lock on ({@code HAND_OVER}). Returns 1 when it had been handed the lock.
     */
    static final String LEAVE_LINE = lua("""
            local t
            @NEXT_TOKEN@
            @HAND_OVER@
            redis.call('LREM', KEYS[3], 1, ARGV[1])
            if redis.call('GET', KEYS[1]) == ARGV[2] then
              handOver(KEYS[3], ARGV[3])
              return 1
            end
            return 0
            """);

    /**
     * KEYS: the grant's key, and for a reader the lock key. ARGV: mode, value, lease ms.
     * Compare-and-{@code PEXPIRE} for the lock; for a set member, a new expiry while its old one
     * has not passed, and for a reader the readers' mark on the lock key kept at least as long.
     */
    static final String RENEW = lua("""
            local lease = tonumber(ARGV[3])
            if ARGV[1] == 'x' then
              if redis.call('GET', KEYS[1]) == ARGV[2] then
                return redis.call('PEXPIRE', KEYS[1], lease)
              end
              return 0
            end
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local ends = redis.call('ZSCORE', KEYS[1], ARGV[2])
            if not ends or tonumber(ends) <= now then
              return 0
            end
            redis.call('ZADD', KEYS[1], 'XX', now + lease, ARGV[2])
            if redis.call('PTTL', KEYS[1]) < lease then
              redis.call('PEXPIRE', KEYS[1], lease)
            end
            if ARGV[1] == 's' then
              local mark = redis.call('GET', KEYS[2])
              if (not mark or mark == '@READERS@') and redis.call('PTTL', KEYS[2]) < lease then
                redis.call('SET', KEYS[2], '@READERS@', 'PX', lease)
              end
            end
            return 1
            """);

    /** KEYS: a shared or permit set. ARGV: value. 1 while our member is there and unexpired. */
    static final String VERIFY_MEMBER = """
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local ends = redis.call('ZSCORE', KEYS[1], ARGV[1])
            if ends and tonumber(ends) > now then
              return 1
            end
            return 0
            """;

    /** KEYS: intent. ARGV: value, channel. A writer gave up: let readers in again, and wake them. */
    static final String DROP_INTENT = """
            if redis.call('GET', KEYS[1]) == ARGV[1] then
              redis.call('DEL', KEYS[1])
              redis.call('PUBLISH', ARGV[2], '1')
              return 1
            end
            return 0
            """;

    /**
     * KEYS: lock, fence, shared. Returns {lock value (not the readers' mark) or false, lock pttl, the reader whose lease
     * runs longest or false, its ms left, live readers, fence or false}, on the server's clock.
     */
    static final String STATUS = lua("""
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            local value = redis.call('GET', KEYS[1])
            if value == '@READERS@' then
              value = false
            end
            local pttl = value and redis.call('PTTL', KEYS[1]) or -2
            local readers = redis.call('ZCOUNT', KEYS[3], '(' .. now, '+inf')
            local last = redis.call('ZRANGE', KEYS[3], -1, -1, 'WITHSCORES')
            local reader, left = false, -2
            if readers > 0 then
              reader, left = last[1], tonumber(last[2]) - now
            end
            return {value, pttl, reader, left, readers, redis.call('GET', KEYS[2])}
            """);
}
