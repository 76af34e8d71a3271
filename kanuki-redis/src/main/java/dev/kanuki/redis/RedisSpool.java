package dev.kanuki.redis;

import dev.kanuki.DeadLetter;
import dev.kanuki.LockBackendException;
import dev.kanuki.ParkedItem;
import dev.kanuki.spi.WorkSpool;
import io.lettuce.core.RedisException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.sync.RedisCommands;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

/**
 * The Redis store's spool for parking locks, beside each name's lock keys (same hash tag):
 * <pre>
 *   kanuki:{D}:park:parked   sorted set, all scores 0: parked item ids (so in id order)
 *   kanuki:{D}:park:items    hash id → "ATTEMPTS\tBASE64" (parked, claimed and dead items)
 *   kanuki:{D}:park:claimed  hash id → fencing token of the holder that claimed it
 *   kanuki:{D}:park:dead     sorted set, all scores 0: dead-letter ids
 *   kanuki:{D}:park:errors   hash id → the last error of a dead letter
 * </pre>
 * Every step is one Lua script, so an item is always in exactly one place. An item is as
 * durable as the server makes writes: {@code appendonly yes} with {@code appendfsync always} for
 * a parked item to survive a server crash; the default {@code everysec} may lose the last second.
 */
final class RedisSpool implements WorkSpool {
    private static final String PARK = """
            redis.call('HSET', KEYS[2], ARGV[1], ARGV[2] .. '\\t' .. ARGV[3])
            redis.call('ZADD', KEYS[1], 0, ARGV[1])
            return 1
            """;
    /** KEYS: parked, items, claimed; ARGV: token, max. Older (and own) claims first, then parked ids in order. */
    private static final String CLAIM = """
            local token = tonumber(ARGV[1])
            local max = tonumber(ARGV[2])
            local ids = {}
            local claimed = redis.call('HGETALL', KEYS[3])
            for i = 1, #claimed, 2 do
              if #ids >= max then break end
              local owner = tonumber(claimed[i + 1])
              if owner <= token then
                if owner < token then redis.call('HSET', KEYS[3], claimed[i], ARGV[1]) end
                ids[#ids + 1] = claimed[i]
              end
            end
            if #ids < max then
              local parked = redis.call('ZRANGE', KEYS[1], 0, max - #ids - 1)
              for _, id in ipairs(parked) do
                redis.call('ZREM', KEYS[1], id)
                redis.call('HSET', KEYS[3], id, ARGV[1])
                ids[#ids + 1] = id
              end
            end
            local out = {}
            for _, id in ipairs(ids) do
              out[#out + 1] = id
              out[#out + 1] = redis.call('HGET', KEYS[2], id) or ''
            end
            return out
            """;
    /** KEYS: claimed, items; ARGV: id, token. */
    private static final String COMPLETE = """
            if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
            redis.call('HDEL', KEYS[1], ARGV[1])
            redis.call('HDEL', KEYS[2], ARGV[1])
            return 1
            """;
    /** KEYS: claimed, items; ARGV: id, token. Returns the new attempt count, or -1. */
    private static final String FAILED = """
            if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return -1 end
            local item = redis.call('HGET', KEYS[2], ARGV[1])
            local tab = string.find(item, '\\t', 1, true)
            local attempts = tonumber(string.sub(item, 1, tab - 1)) + 1
            redis.call('HSET', KEYS[2], ARGV[1], attempts .. string.sub(item, tab))
            return attempts
            """;
    /** KEYS: claimed, dead, errors; ARGV: id, token, error. */
    private static final String DEAD = """
            if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
            redis.call('HDEL', KEYS[1], ARGV[1])
            redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
            redis.call('ZADD', KEYS[2], 0, ARGV[1])
            return 1
            """;
    /** KEYS: parked, claimed. */
    private static final String WAITING = """
            return redis.call('ZCARD', KEYS[1]) + redis.call('HLEN', KEYS[2])
            """;
    /** KEYS: parked, items, claimed. Every waiting id with its item. */
    private static final String LIST = """
            local ids = redis.call('ZRANGE', KEYS[1], 0, -1)
            for _, id in ipairs(redis.call('HKEYS', KEYS[3])) do ids[#ids + 1] = id end
            local out = {}
            for _, id in ipairs(ids) do
              out[#out + 1] = id
              out[#out + 1] = redis.call('HGET', KEYS[2], id) or ''
            end
            return out
            """;
    /** KEYS: dead, items, errors. Every dead id with its item and error. */
    private static final String DEAD_LIST = """
            local out = {}
            for _, id in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do
              out[#out + 1] = id
              out[#out + 1] = redis.call('HGET', KEYS[2], id) or ''
              out[#out + 1] = redis.call('HGET', KEYS[3], id) or ''
            end
            return out
            """;

    private final RedisCommands<String, String> redis;
    private final String scope;

    RedisSpool(RedisCommands<String, String> redis, String scope) {
        this.redis = redis;
        this.scope = scope;
    }

    /** The spool's keys of one name. */
    private record Keys(String parked, String items, String claimed, String dead, String errors) {
        static Keys of(String name) {
            String tag = RedisKeys.PREFIX + RedisKeys.digest(dev.kanuki.LockNames.validate(name)) + "}:park:";
            return new Keys(tag + "parked", tag + "items", tag + "claimed", tag + "dead", tag + "errors");
        }
    }

    @Override
    public String describe() {
        return "Redis spool at " + scope;
    }

    private <T> T eval(String script, ScriptOutputType type, String[] keys, String... args) {
        try {
            return redis.eval(script, type, keys, args);
        } catch (RedisException e) {
            throw RedisLockBackend.failed(scope, e);
        }
    }

    @Override
    public void park(String name, ParkedItem item) {
        Keys k = Keys.of(name);
        eval(PARK, ScriptOutputType.INTEGER, new String[] {k.parked, k.items}, item.id(),
                Integer.toString(item.attempts()), Base64.getEncoder().encodeToString(item.bytes()));
    }

    @Override
    public List<ParkedItem> claim(String name, long token, int max) {
        Keys k = Keys.of(name);
        List<String> flat = eval(CLAIM, ScriptOutputType.MULTI, new String[] {k.parked, k.items, k.claimed},
                Long.toString(token), Integer.toString(max));
        return items(flat, 2);
    }

    private List<ParkedItem> items(List<String> flat, int stride) {
        List<ParkedItem> items = new ArrayList<>();
        for (int i = 0; i + 1 < flat.size(); i += stride) {
            ParkedItem item = decode(flat.get(i), flat.get(i + 1));
            if (item != null) {
                items.add(item);
            }
        }
        items.sort(java.util.Comparator.comparing(ParkedItem::id));
        return items;
    }

    private ParkedItem decode(String id, String stored) {
        int tab = stored.indexOf('\t');
        if (tab < 0 || id.length() < 18) {
            throw new LockBackendException("Redis at " + scope + " holds a spool item " + dev.kanuki.spi.SafeNames.printable(id)
                    + " kanuki did not write", "remove the name's kanuki:{...}:park:* keys by hand if you did not create it", null);
        }
        return new ParkedItem(id, id.substring(17), Base64.getDecoder().decode(stored.substring(tab + 1)),
                Integer.parseInt(stored.substring(0, tab)));
    }

    @Override
    public boolean complete(String name, ParkedItem item, long token) {
        Keys k = Keys.of(name);
        Long done = eval(COMPLETE, ScriptOutputType.INTEGER, new String[] {k.claimed, k.items}, item.id(),
                Long.toString(token));
        return done != null && done == 1;
    }

    @Override
    public ParkedItem failed(String name, ParkedItem item, long token) {
        Keys k = Keys.of(name);
        Long attempts = eval(FAILED, ScriptOutputType.INTEGER, new String[] {k.claimed, k.items}, item.id(),
                Long.toString(token));
        return attempts == null || attempts < 0 ? null : item.withAttempts(attempts.intValue());
    }

    @Override
    public boolean deadLetter(String name, ParkedItem item, long token, String error) {
        Keys k = Keys.of(name);
        Long done = eval(DEAD, ScriptOutputType.INTEGER, new String[] {k.claimed, k.dead, k.errors}, item.id(),
                Long.toString(token), error);
        return done != null && done == 1;
    }

    @Override
    public boolean isEmpty(String name) {
        Keys k = Keys.of(name);
        Long waiting = eval(WAITING, ScriptOutputType.INTEGER, new String[] {k.parked, k.claimed});
        return waiting == null || waiting == 0;
    }

    @Override
    public List<ParkedItem> list(String name) {
        Keys k = Keys.of(name);
        return items(eval(LIST, ScriptOutputType.MULTI, new String[] {k.parked, k.items, k.claimed}), 2);
    }

    @Override
    public List<DeadLetter> deadLetters(String name) {
        Keys k = Keys.of(name);
        List<String> flat = eval(DEAD_LIST, ScriptOutputType.MULTI, new String[] {k.dead, k.items, k.errors});
        List<DeadLetter> letters = new ArrayList<>();
        for (int i = 0; i + 2 < flat.size(); i += 3) {
            letters.add(new DeadLetter(decode(flat.get(i), flat.get(i + 1)), flat.get(i + 2)));
        }
        letters.sort(java.util.Comparator.comparing(d -> d.item().id()));
        return letters;
    }

    @Override
    public void close() {
        // the backend's connection; closed with the backend
    }

    @Override
    public String toString() {
        return describe();
    }
}
