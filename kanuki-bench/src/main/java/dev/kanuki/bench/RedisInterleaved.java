package dev.kanuki.bench;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.engine.BackendRegistry;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.LockUri;
import dev.kanuki.testkit.RedisServer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Base64;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.redisson.Redisson;
import org.redisson.api.RLock;
import org.redisson.api.RedissonClient;
import org.redisson.config.Config;

/**
 * Uncontended Redis acquire+release, interleaved in one JVM on one {@code redis-server} started
 * by the test kit: kanuki ({@code redis://}, {@code tryAcquire()} + {@code close()}, and
 * {@code acquire(5s)} + {@code close()}: no fencing token asked for, so none is issued),
 * kanuki with the token ({@code tryAcquire()} + {@code fencingToken()} + {@code close()}: its
 * holders ask, so the token comes with the acquisition), kanuki-redis's backend called
 * directly without the engine ({@code LockBackend.tryAcquire} + {@code release}), raw Lettuce
 * ({@link RedisByHand#setNxThenDelete}: {@code SET NX PX} + {@code EVALSHA} compare-and-delete),
 * kanuki's own commands by hand over raw Lettuce ({@link RedisByHand#sameScripts}, on keys of
 * kanuki's shape and a value of its owner record's size, made once), and
 * Redisson 4.7.0 ({@code RLock.lock(30, SECONDS)} + {@code unlock()}: a lease time, so no
 * watchdog). Each round opens new clients for every side and alternates blocks of
 * {@value #BLOCK} operations of each side {@value #BLOCKS} times, so the machine's other load
 * falls on all sides alike. Every operation is timed; a round's figure for a side is its median
 * operation (the machine's bursts of other load land on a few operations, which move a mean far
 * more than the median); ratios are taken within each round, then the median over rounds. Not JMH: the
 * first rounds are warm-up and are dropped: at least {@value #WARM_ROUNDS}, then until kanukiTry / raw
 * settles ({@link WarmUp}). Targets: kanuki ≤ 1.2× raw,
 * ≈ 0.75× Redisson.
 *
 * <pre>
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.RedisInterleaved [ROUNDS]
 * </pre>
 */
public final class RedisInterleaved {
    private static final int BLOCK = 5;
    private static final int BLOCKS = 100;
    private static final int WARM_ROUNDS = 2;
    private static final Duration DEFAULT_LEASE = Duration.ofSeconds(30);
    /** The sides, in the order of a round's columns. */
    static final String[] SIDES = {"kanukiTry", "kanukiAcquire", "backend", "raw", "same", "redisson", "kanukiToken"};

    private RedisInterleaved() {
    }

    /**
     * @param args {@code [ROUNDS]}, measured rounds after the warm-up (default 10)
     * @throws Exception when a side fails
     */
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        try (RedisServer server = RedisServer.start()) {
            run(server.kanukiUri(), WARM_ROUNDS, rounds, BLOCKS);
        }
    }

    /** A Redisson client of one server, with Redisson's defaults otherwise. */
    static RedissonClient redisson(String uri) {
        Config config = new Config();
        config.useSingleServer().setAddress(uri);
        return Redisson.create(config);
    }

    /**
     * Runs warm-up rounds (at least {@code warmRounds}, until kanukiTry / raw settles; none if 0),
     * then {@code rounds} rounds of {@code blocks} blocks per side, and prints their medians and ratios.
     *
     * @return the measured rounds, µs per acquire+release, one column per {@link #SIDES side}
     */
    static List<double[]> run(String uri, int warmRounds, int rounds, int blocks) throws Exception {
        List<double[]> results = new ArrayList<>();
        Duration wait = Duration.ofSeconds(5);
        // kanuki's key shape (kanuki:{base64url SHA-256 of the name}:…) and owner record size
        String tag = "kanuki:{" + Base64.getUrlEncoder().withoutPadding().encodeToString(
                MessageDigest.getInstance("SHA-256").digest("bench-same".getBytes(StandardCharsets.UTF_8))) + "}";
        String record = "0123456789abcdef0123456789abcdef\thost.example\t12345\t1795416091000\tbench-same#";
        WarmUp warmUp = new WarmUp("redis kanukiTry/raw", warmRounds);
        while (results.size() < rounds) {
            RedissonClient redisson = redisson(uri);
            LockBackend backend = BackendRegistry.forScheme("redis").create(LockUri.parse(uri));
            try (LockProvider provider = LockProvider.open(uri);
                 RedisByHand raw = new RedisByHand(uri);
                 RedisByHand same = new RedisByHand(uri)) {
                DistributedLock tryLock = provider.lock("bench-try");
                DistributedLock acquireLock = provider.lock("bench-acquire");
                DistributedLock tokenLock = provider.lock("bench-token");
                RLock rlock = redisson.getLock("redisson-bench");
                long[] counter = {0};
                Interleaved.Op[] ops = {
                    () -> tryLock.tryAcquire().orElseThrow().close(),
                    () -> acquireLock.acquire(wait).close(),
                    () -> {
                        LockRequest request = new LockRequest("bench-backend", LockMode.EXCLUSIVE, 1, DEFAULT_LEASE);
                        Grant grant = backend.tryAcquire(request).orElseThrow();
                        backend.release(grant);
                    },
                    () -> raw.setNxThenDelete("raw:bench", "owner-" + ++counter[0]),
                    () -> same.sameScripts(tag, record + ++counter[0]),
                    () -> {
                        rlock.lock(RedisByHand.LEASE_MILLIS, TimeUnit.MILLISECONDS);
                        rlock.unlock();
                    },
                    () -> {
                        try (LockHandle h = tokenLock.tryAcquire().orElseThrow()) {
                            h.fencingToken();
                        }
                    },
                };
                double[] micros = Interleaved.perOperation(ops, blocks, BLOCK);
                if (warmUp.warming()) {
                    warmUp.offer(micros[0] / micros[3]);
                } else {
                    results.add(micros);
                }
            } finally {
                backend.close();
                redisson.shutdown();
            }
        }
        System.out.printf(Locale.ROOT, "redis uncontended acquire+release, %d rounds of %d×%d ops per side,"
                + " median over rounds of each round's p50 (and mean) µs/op%n", rounds, blocks, BLOCK);
        Rounds.printMedians("  p50 ", SIDES, results, "%.1f");
        Rounds.printMedians("  mean", SIDES, Rounds.columns(results, SIDES.length, 2 * SIDES.length), "%.1f");
        System.out.println("  median of per-round ratios:");
        Rounds.printRatio("kanukiTry/raw", results, 0, 3, "≤ 1.2x");
        Rounds.printRatio("kanukiAcquire/raw", results, 1, 3, "≤ 1.2x");
        Rounds.printRatio("kanukiTry/redisson", results, 0, 5, "≈ 0.75x");
        Rounds.printRatio("kanukiAcquire/redisson", results, 1, 5, "≈ 0.75x");
        Rounds.printRatio("kanukiToken/raw (with a fencing token)", results, 6, 3, "");
        Rounds.printRatio("kanukiToken/redisson", results, 6, 5, "");
        System.out.println("  where kanukiTry/raw goes: same/raw × backend/same × kanukiTry/backend");
        Rounds.printRatio("same/raw (kanuki's commands)", results, 4, 3, "");
        Rounds.printRatio("backend/same (keys, record)", results, 2, 4, "");
        Rounds.printRatio("kanukiTry/backend (engine)", results, 0, 2, "");
        Rounds.printRatio("redisson/raw", results, 5, 3, "");
        return results;
    }
}
