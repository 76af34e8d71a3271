package dev.kanuki.bench;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.ZooKeeperServer;
import java.time.Duration;
import java.util.List;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.data.Stat;

/**
 * Uncontended acquire + release on ZooKeeper, five sides taking turns in one JVM on one server
 * started by the test kit ({@link InterleavedRounds}: each round opens new clients, so new
 * sessions and connections; blocks of {@value InterleavedRounds#BLOCK} operations, {@value InterleavedRounds#BLOCKS} times per
 * round; medians of per-round ratios):
 *
 * <ul>
 *   <li>{@code kanuki}: {@code zookeeper://} {@code acquire(5s)} + {@code close()};
 *   <li>{@code kanukiTry}: {@code tryAcquire()} + {@code close()};
 *   <li>{@code raw}: the plain {@link org.apache.zookeeper.ZooKeeper} handle, no Curator:
 *       synchronous {@code create(EPHEMERAL)} returning the {@link Stat}, then {@code delete};
 *   <li>{@code curatorOps}: the same two calls through Curator's framework client (what kanuki
 *       calls, in the foreground);
 *   <li>{@code curator}: Curator's {@link InterProcessMutex} {@code acquire(5s)} + {@code release()}.
 * </ul>
 *
 * Targets: kanuki ≤ 1.2× raw and ≤ 0.5× Curator's mutex.
 *
 * <pre>
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.ZooKeeperInterleaved [ROUNDS]
 * </pre>
 */
public final class ZooKeeperInterleaved {
    private ZooKeeperInterleaved() {
    }

    /**
     * @param args the number of measured rounds (default 10)
     * @throws Exception when ZooKeeper is missing or a side fails
     */
    public static void main(String[] args) throws Exception {
        try (ZooKeeperServer server = ZooKeeperServer.start()) {
            run(server, InterleavedRounds.WARM_ROUNDS, InterleavedRounds.rounds(args), InterleavedRounds.BLOCK, InterleavedRounds.BLOCKS).print("zookeeper acquire+release", "kanuki", "raw", "kanukiTry", "raw",
                    "kanuki", "curator", "raw", "curator", "curatorOps", "raw");
        }
    }

    /** Runs the rounds after at least {@code warm} warm-up rounds (the smoke test runs one tiny round, no warm-up). */
    static InterleavedRounds.Results run(ZooKeeperServer server, int warm, int rounds, int block, int blocks) throws Exception {
        // not the handoff ring's nodes: a partner JVM's may outlive it by a session timeout
        String rawPath = ZooKeeperByHand.rawPath("uncontended");
        String opsPath = rawPath + "-curator-ops";
        return InterleavedRounds.run(() -> {
            LockProvider provider = LockProvider.open(server.kanukiUri());
            ZooKeeperByHand raw = new ZooKeeperByHand(server.connectString());
            CuratorFramework curator = ZooKeeperByHand.curator(server.connectString());
            raw.parentOf(rawPath);
            DistributedLock lock = provider.lock("bench");
            InterProcessMutex mutex = new InterProcessMutex(curator, ZooKeeperByHand.curatorPath("uncontended"));
            List<InterleavedRounds.Side> sides = List.of(
                    new InterleavedRounds.Side("kanuki", () -> lock.acquire(Duration.ofSeconds(5)).close()),
                    new InterleavedRounds.Side("kanukiTry", () -> lock.tryAcquire().orElseThrow().close()),
                    new InterleavedRounds.Side("raw", () -> raw.createAndDelete(rawPath)),
                    new InterleavedRounds.Side("curatorOps", () -> {
                        curator.create().storingStatIn(new Stat()).withMode(CreateMode.EPHEMERAL)
                                .forPath(opsPath, ZooKeeperByHand.RECORD);
                        curator.delete().forPath(opsPath);
                    }),
                    new InterleavedRounds.Side("curator", () -> {
                        if (!mutex.acquire(5, java.util.concurrent.TimeUnit.SECONDS)) {
                            throw new IllegalStateException("Curator's mutex was not free");
                        }
                        mutex.release();
                    }));
            return InterleavedRounds.Round.of(sides, () -> {
                try (raw) {
                    curator.close();
                    provider.close();
                }
            });
        }, warm, rounds, block, blocks);
    }
}
