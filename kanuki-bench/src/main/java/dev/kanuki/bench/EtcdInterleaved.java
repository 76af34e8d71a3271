package dev.kanuki.bench;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.EtcdServer;
import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.KV;
import io.etcd.jetcd.kv.TxnResponse;
import io.etcd.jetcd.op.Cmp;
import io.etcd.jetcd.op.CmpTarget;
import io.etcd.jetcd.op.Op;
import io.etcd.jetcd.options.DeleteOption;
import io.etcd.jetcd.options.GetOption;
import io.etcd.jetcd.options.PutOption;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;

/**
 * Uncontended acquire + release on etcd, four sides taking turns in one JVM on one server started
 * by the test kit ({@link InterleavedRounds}: each round opens new clients; blocks of
 * {@value InterleavedRounds#BLOCK} operations, {@value InterleavedRounds#BLOCKS} times per round; medians of per-round ratios):
 *
 * <ul>
 *   <li>{@code kanuki}: {@code etcd://} {@code acquire(5s)} + {@code close()};
 *   <li>{@code kanukiTry}: {@code tryAcquire()} + {@code close()};
 *   <li>{@code raw}: jetcd by hand, the least a lock needs: a transaction "if the key's create
 *       revision is 0, put it with a lease" (the lease granted once per round), then a plain
 *       {@code delete};
 *   <li>{@code same}: kanuki's requests by hand: the transaction also reads the key back (its create
 *       revision is the fencing token; {@code Else} reads the holder), and the delete is a
 *       transaction on that create revision.
 * </ul>
 *
 * No target was set; the ratio kanuki/raw is reported.
 *
 * <pre>
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.EtcdInterleaved [ROUNDS]
 * </pre>
 */
public final class EtcdInterleaved {
    private EtcdInterleaved() {
    }

    /**
     * @param args the number of measured rounds (default 10)
     * @throws Exception when etcd is missing or a side fails
     */
    public static void main(String[] args) throws Exception {
        try (EtcdServer server = EtcdServer.start()) {
            run(server, InterleavedRounds.WARM_ROUNDS, InterleavedRounds.rounds(args), InterleavedRounds.BLOCK, InterleavedRounds.BLOCKS).print("etcd acquire+release", "kanuki", "raw", "kanukiTry", "raw",
                    "same", "raw", "kanuki", "same");
        }
    }

    /** Runs the rounds after at least {@code warm} warm-up rounds (the smoke test runs one tiny round, no warm-up). */
    static InterleavedRounds.Results run(EtcdServer server, int warm, int rounds, int block, int blocks) throws Exception {
        ByteSequence rawKey = bytes("kanuki-bench/raw");
        ByteSequence sameKey = bytes("kanuki-bench/same");
        ByteSequence record = ByteSequence.from(ZooKeeperByHand.RECORD);
        return InterleavedRounds.run(() -> {
            LockProvider provider = LockProvider.open(server.kanukiUri());
            Client client = Client.builder().endpoints(server.endpoint()).build();
            KV kv = client.getKVClient();
            long lease = client.getLeaseClient().grant(60).get().getID();
            PutOption withLease = PutOption.builder().withLeaseId(lease).build();
            DistributedLock lock = provider.lock("bench");
            List<InterleavedRounds.Side> sides = List.of(
                    new InterleavedRounds.Side("kanuki", () -> lock.acquire(Duration.ofSeconds(5)).close()),
                    new InterleavedRounds.Side("kanukiTry", () -> lock.tryAcquire().orElseThrow().close()),
                    new InterleavedRounds.Side("raw", () -> {
                        TxnResponse r = kv.txn().If(new Cmp(rawKey, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                                .Then(Op.put(rawKey, record, withLease)).commit().get();
                        check(r);
                        kv.delete(rawKey).get();
                    }),
                    new InterleavedRounds.Side("same", () -> {
                        TxnResponse r = kv.txn().If(new Cmp(sameKey, Cmp.Op.EQUAL, CmpTarget.createRevision(0)))
                                .Then(Op.put(sameKey, record, withLease), Op.get(sameKey, GetOption.DEFAULT))
                                .Else(Op.get(sameKey, GetOption.DEFAULT)).commit().get();
                        check(r);
                        long token = r.getGetResponses().get(0).getKvs().get(0).getCreateRevision();
                        kv.txn().If(new Cmp(sameKey, Cmp.Op.EQUAL, CmpTarget.createRevision(token)))
                                .Then(Op.delete(sameKey, DeleteOption.DEFAULT)).commit().get();
                    }));
            return InterleavedRounds.Round.of(sides, () -> {
                try (client) {
                    client.getLeaseClient().revoke(lease).get();
                } finally {
                    provider.close();
                }
            });
        }, warm, rounds, block, blocks);
    }

    private static void check(TxnResponse r) {
        if (!r.isSucceeded()) {
            throw new IllegalStateException("the key exists: nobody else should hold it");
        }
    }

    private static ByteSequence bytes(String s) {
        return ByteSequence.from(s, StandardCharsets.UTF_8);
    }
}
