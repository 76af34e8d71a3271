package dev.kanuki.bench;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.MemcachedServer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;

/**
 * memcached acquire+release through kanuki ({@code tryAcquire()} + {@code close()}: add, CAS
 * read and fencing increment in one round trip, then compare-and-delete) beside the raw minimum
 * by hand ({@link MemcachedByHand#addAndDelete}: add with expiry, then compare-and-delete) and
 * beside kanuki's own commands by hand ({@link MemcachedByHand#sameCommands}), which splits the
 * ratio into what the commands cost on the server and what kanuki's client and engine add. One
 * JVM, one memcached started by the test kit with one worker thread; each round opens a new provider and new raw
 * connections (a loopback connection's cost depends on where the server's thread for it runs) and
 * alternates short blocks of {@value #BLOCK} operations of each side {@value #BLOCKS} times, so
 * that the machine's other load falls on all sides alike; ratios are taken within each round,
 * then the median. Not JMH: the first rounds are warm-up and are dropped.
 *
 * <pre>
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.MemcachedInterleaved [ROUNDS]
 * </pre>
 */
public final class MemcachedInterleaved {
    private static final int BLOCK = 100;
    private static final int BLOCKS = 20;
    private static final int WARM_ROUNDS = 2;

    private MemcachedInterleaved() {
    }

    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        // one worker thread: every connection is served by the same thread, so no side gets a
        // luckier thread (memcached hands connections to its threads in turn)
        try (MemcachedServer server = MemcachedServer.start(MemcachedServer.DEFAULT_MEGABYTES, false, List.of("-t", "1"))) {
            run(server, rounds);
        }
    }

    static void run(MemcachedServer server, int rounds) throws Exception {
        // an owner record of kanuki's size: id, host, pid, time, name
        byte[] record = ("0123456789abcdef0123456789abcdef\thost.example\t12345\t1795416091000\tbench")
                .getBytes(StandardCharsets.UTF_8);
        String rawKey = "kanuki.lock.0123456789abcdef0123456789abcdef";
        String sameKey = "kanuki.lock.1123456789abcdef0123456789abcdef";
        String sameFence = "kanuki.fence.1123456789abcdef0123456789abcdef";
        String[] names = {"kanuki", "raw", "same"};
        // one round: a new provider and new raw connections
        List<double[]> results = Interleaved.measure(round -> new Interleaved.Round() {
            final LockProvider provider = LockProvider.open(server.kanukiUri());
            final MemcachedByHand raw = new MemcachedByHand(server.host(), server.port());
            final MemcachedByHand same = new MemcachedByHand(server.host(), server.port());
            final DistributedLock lock = provider.lock("bench");

            @Override
            public Interleaved.Op[] ops() {
                return new Interleaved.Op[] {() -> lock.tryAcquire().orElseThrow().close(),
                    () -> raw.addAndDelete(rawKey, record), () -> same.sameCommands(sameKey, sameFence, record)};
            }

            @Override
            public void close() throws Exception {
                try (provider; raw; same) {
                    // closes all three
                }
            }
        }, WARM_ROUNDS, rounds, BLOCKS, BLOCK);
        System.out.printf(Locale.ROOT, "memcached, %d rounds of %d×%d ops, median µs/op:", rounds, BLOCKS, BLOCK);
        for (int k = 0; k < names.length; k++) {
            System.out.printf(Locale.ROOT, " %s %.1f", names[k], Rounds.median(results, k));
        }
        System.out.println();
        System.out.printf(Locale.ROOT, "  median of per-round ratios: kanuki/raw %.2fx = same/raw %.2fx (the commands)"
                        + " × kanuki/same %.2fx (client and engine)%n",
                Rounds.ratio(results, 0, 1), Rounds.ratio(results, 2, 1), Rounds.ratio(results, 0, 2));
        System.out.printf(Locale.ROOT, "  kanuki/raw per round: %s%n", Rounds.perRound(results, 0, 1));
    }
}
