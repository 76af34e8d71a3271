package dev.kanuki.bench;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.engine.BackendRegistry;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.LockUri;
import dev.kanuki.testkit.MemcachedServer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * memcached acquire+release through kanuki ({@code tryAcquire()} + {@code close()}: add and CAS
 * read in one round trip, then compare-and-delete; no fencing token asked for, so none is
 * issued), through kanuki with the token ({@code tryAcquire()} + {@code fencingToken()} +
 * {@code close()}: its holders ask, so the fencing increment joins the acquisition's round
 * trip), through kanuki-memcached's backend called directly without the engine
 * ({@code LockBackend.tryAcquire} + {@code release}), beside the raw minimum by hand
 * ({@link MemcachedByHand#addAndDelete}: meta add with expiry returning the CAS, then
 * compare-and-delete) and beside kanuki's own commands by hand ({@link MemcachedByHand#sameCommands}),
 * which splits the ratio into what the commands cost on the server and what kanuki's client and
 * engine add. One JVM, one memcached started by the test kit with one worker thread; each round
 * opens a new provider and new raw connections (a loopback connection's cost depends on where
 * the server's thread for it runs) and alternates blocks of {@value #BLOCK} operations of each
 * side {@value #BLOCKS} times, each block starting with the next side, so that the machine's
 * other load falls on all sides alike. Every operation is timed; a round's figure for a side is
 * its median operation, and its mean is printed too (bursts of other load, and garbage
 * collection, land on a few operations, which move a mean far more than the median). Ratios are
 * taken within each round, then the median over rounds. Not JMH: the first rounds are warm-up
 * and are dropped, at least {@value #WARM_ROUNDS}, then until kanuki / raw settles ({@link WarmUp}).
 * Target: kanuki ≤ 1.2× raw.
 *
 * <pre>
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.MemcachedInterleaved [ROUNDS]
 * </pre>
 */
public final class MemcachedInterleaved {
    private static final int BLOCK = 10;
    private static final int BLOCKS = 200;
    /**
     * At least this many warm-up rounds: in three runs at load ~20 the per-round ratio kanuki / raw
     * stayed at 1.11–1.21 for seven rounds, steady enough to pass {@link WarmUp}'s test, then
     * stepped down to 1.05–1.08 at the eighth (about 16,000 operations of each side) and stayed.
     */
    private static final int WARM_ROUNDS = 8;
    private static final Duration LEASE = Duration.ofSeconds(30);
    /** The sides, in the order of a round's columns. */
    static final String[] SIDES = {"kanuki", "raw", "same", "kanukiToken", "backend"};

    private MemcachedInterleaved() {
    }

    /**
     * @param args {@code [ROUNDS]}, measured rounds after the warm-up (default 10)
     * @throws Exception when a side fails
     */
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        // one worker thread: every connection is served by the same thread, so no side gets a
        // luckier thread (memcached hands connections to its threads in turn)
        try (MemcachedServer server = MemcachedServer.start(MemcachedServer.DEFAULT_MEGABYTES, false, List.of("-t", "1"))) {
            run(server, WARM_ROUNDS, rounds);
        }
    }

    /**
     * Runs the warm-up (at least {@code warm} rounds, until kanuki / raw settles; none if 0) and
     * {@code rounds} measured rounds, and prints medians and ratios.
     *
     * @return the measured rounds: per side the median µs of one operation, then per side the mean
     */
    static List<double[]> run(MemcachedServer server, int warm, int rounds) throws Exception {
        // an owner record of kanuki's size: id, host, pid, time, name
        byte[] record = ("0123456789abcdef0123456789abcdef\thost.example\t12345\t1795416091000\tbench")
                .getBytes(StandardCharsets.UTF_8);
        String rawKey = "kanuki.lock.0123456789abcdef0123456789abcdef";
        String sameKey = "kanuki.lock.1123456789abcdef0123456789abcdef";
        List<double[]> results = new ArrayList<>();
        WarmUp warmUp = new WarmUp("memcached kanuki/raw", warm);
        while (results.size() < rounds) {
            // one round: a new provider, a new backend and new raw connections
            try (LockProvider provider = LockProvider.open(server.kanukiUri());
                 LockBackend backend = BackendRegistry.forScheme("memcached").create(LockUri.parse(server.kanukiUri()));
                 MemcachedByHand raw = new MemcachedByHand(server.host(), server.port());
                 MemcachedByHand same = new MemcachedByHand(server.host(), server.port())) {
                DistributedLock lock = provider.lock("bench");
                DistributedLock tokenLock = provider.lock("bench-token");
                Interleaved.Op[] ops = {
                    () -> lock.tryAcquire().orElseThrow().close(),
                    () -> raw.addAndDelete(rawKey, record),
                    () -> same.sameCommands(sameKey, record),
                    () -> {
                        try (LockHandle h = tokenLock.tryAcquire().orElseThrow()) {
                            h.fencingToken();
                        }
                    },
                    () -> {
                        LockRequest request = new LockRequest("bench-backend", LockMode.EXCLUSIVE, 1, LEASE);
                        backend.release(backend.tryAcquire(request).orElseThrow());
                    },
                };
                double[] micros = Interleaved.perOperation(ops, BLOCKS, BLOCK);
                if (warmUp.warming()) {
                    warmUp.offer(micros[0] / micros[1]);
                } else {
                    results.add(micros);
                }
            }
        }
        System.out.printf(Locale.ROOT, "memcached uncontended acquire+release, %d rounds of %d×%d ops per side,"
                + " median over rounds of each round's p50 (and mean) µs/op%n", rounds, BLOCKS, BLOCK);
        Rounds.printMedians("  p50 ", SIDES, results, "%.1f");
        Rounds.printMedians("  mean", SIDES, Rounds.columns(results, SIDES.length, 2 * SIDES.length), "%.1f");
        int mean = SIDES.length;
        System.out.println("  median of per-round ratios:");
        Rounds.printRatio("kanuki/raw", results, 0, 1, "≤ 1.2x");
        Rounds.printRatio("kanuki/raw (means)", results, mean, mean + 1, "≤ 1.2x");
        Rounds.printRatio("kanukiToken/raw (with a fencing token)", results, 3, 1, "");
        System.out.println("  where kanuki/raw goes: same/raw × backend/same × kanuki/backend");
        Rounds.printRatio("same/raw (the commands)", results, 2, 1, "");
        Rounds.printRatio("backend/same (keys, record, client)", results, 4, 2, "");
        Rounds.printRatio("kanuki/backend (engine)", results, 0, 4, "");
        return results;
    }
}
