package dev.kanuki.bench;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Uncontended acquire + release of every {@code file:} strategy, kanuki beside the same syscalls
 * by hand, interleaved in one JVM ({@link Interleaved}: blocks of {@value #BLOCK} operations
 * ({@code os}; {@value #TTL_BLOCK} for a ttl strategy) of each side in turn, {@value #BLOCKS} blocks a
 * round ({@value #OS_BLOCKS} for {@code os}), a new provider and new directories each
 * round, {@value #WARM_ROUNDS} warm-up rounds dropped ({@value #OS_WARM_ROUNDS} for {@code os}), ratios taken within each round, then the
 * median), and the {@code os} handoff between two processes interleaved with the raw blocking
 * {@code FileChannel.lock} handoff.
 *
 * <p>Sides, per strategy:
 * <ul>
 *   <li>{@code kanuki}: {@code tryAcquire()} ({@code os}) or {@code acquire(5s)} (ttl), then
 *       {@code fencingToken()}, then {@code close()}, one lock of a provider opened for the round.</li>
 *   <li>{@code same} (the target's baseline): {@code os}: {@link OsByHand#sameWork()} (lock, the
 *       identity check, the owner/fencing record, unlock on a channel kept open); ttl:
 *       {@link TtlByHand#sameWork()} (kanuki-file's syscalls for that strategy, written out).</li>
 *   <li>{@code bare} (context only): the lock and its undo alone.</li>
 * </ul>
 *
 * <p>Handoff ({@code handoff} argument): four {@link HandoffPair}s open at once (kanuki os,
 * raw {@code FileChannel.lock}, raw with the owner record, raw with the owner record and the
 * identity {@code lstat}: the least a lock with kanuki's guarantees does), each this JVM and a
 * {@link HandoffPartner} JVM passing a baton around a {@link HandoffRing}; blocks of
 * {@value #HANDOFF_BLOCK} round trips of each pair in turn. A pair not being stepped waits in the
 * kernel, so it costs no CPU meanwhile. Time per handoff = round trip / 2.
 *
 * <pre>
 * mvn -q -B -ntp -DskipTests -pl kanuki-bench -am package
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.FileInterleaved [ROUNDS] [os mkdir symlink rename create queue handoff]
 * taskset -c 1 java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.FileInterleaved 5 handoff   # pinned
 * </pre>
 */
public final class FileInterleaved {
    static final List<String> ALL = List.of("os", "mkdir", "symlink", "rename", "create", "queue", "handoff");
    /**
     * Operations per block: short blocks, so that a burst of the machine's other load falls on
     * every side alike ({@code os} takes microseconds, a ttl strategy up to a millisecond or more).
     */
    private static final int BLOCK = 20;
    private static final int TTL_BLOCK = 5;
    private static final int BLOCKS = 100;
    private static final int HANDOFF_BLOCK = 50;
    private static final int WARM_ROUNDS = 3;
    /**
     * Blocks per {@code os} round. An {@code os} operation takes microseconds of CPU, and on a
     * loaded machine a preemption (tens of milliseconds in the run queue) every few milliseconds
     * of CPU decides a short round alone: 1,000 blocks (20,000 operations a side, about 0.1–0.5 s
     * of CPU) spread many preemptions over both sides in proportion to their work.
     */
    private static final int OS_BLOCKS = 1000;
    /**
     * kanuki's path is deep: C2 needs tens of thousands of acquisitions (more on a loaded machine)
     * before it runs compiled, and a ratio taken earlier measures the JIT. Two {@code os} rounds
     * are 40,000 acquisitions of each side.
     */
    private static final int OS_WARM_ROUNDS = 2;
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private FileInterleaved() {
    }

    /** @param args ROUNDS (default 5), then the cases to run (default all of {@link #ALL}) */
    public static void main(String[] args) throws Exception {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        List<String> cases = args.length > 1 ? Arrays.asList(args).subList(1, args.length) : ALL;
        for (String c : cases) {
            boolean os = c.equals("os");
            System.out.println(run(c, os ? OS_WARM_ROUNDS : WARM_ROUNDS, rounds, os ? OS_BLOCKS : BLOCKS, switch (c) {
                case "handoff" -> HANDOFF_BLOCK;
                case "os" -> BLOCK;
                default -> TTL_BLOCK;
            }).report());
        }
    }

    /** The outcome of one case: per measured round, µs per op of each side. */
    record Result(String name, List<String> sides, List<double[]> rounds, List<double[]> cpu, String work) {
        /** @return medians, and the median of per-round ratios of kanuki to every other side */
        String report() {
            StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%s (%d rounds, µs/op, medians):",
                    name, rounds.size()));
            for (int k = 0; k < sides.size(); k++) {
                b.append(String.format(Locale.ROOT, " %s %.2f", sides.get(k), Rounds.median(rounds, k)));
            }
            for (int k = 1; k < sides.size(); k++) {
                b.append(String.format(Locale.ROOT, "%n  kanuki/%s %.2fx  [per round %s]", sides.get(k),
                        Rounds.ratio(rounds, 0, k), Rounds.perRound(rounds, 0, k)));
            }
            if (!cpu.isEmpty()) {
                b.append("\n  CPU µs/op of the measuring thread, medians:");
                for (int k = 0; k < sides.size(); k++) {
                    b.append(String.format(Locale.ROOT, " %s %.2f", sides.get(k), Rounds.median(cpu, k)));
                }
                for (int k = 1; k < sides.size(); k++) {
                    b.append(String.format(Locale.ROOT, "; kanuki/%s %.2fx", sides.get(k), Rounds.ratio(cpu, 0, k)));
                }
            }
            return b.append(work.isEmpty() ? "" : "\n  " + work).toString();
        }
    }

    /** Runs one case; package-private for the smoke test, which checks the work was done. */
    static Result run(String strategy, int warmRounds, int rounds, int blocks, int block) throws Exception {
        if (strategy.equals("handoff")) {
            return handoff(warmRounds, rounds, blocks, block);
        }
        long[] tokens = new long[2];
        Interleaved.Measured results = Interleaved.measureWithCpu(round -> strategy.equals("os")
                ? osRound(tokens) : ttlRound(strategy, tokens), warmRounds, rounds, blocks, block);
        if (tokens[0] <= 0 || tokens[1] <= 0) {
            throw new IllegalStateException(strategy + ": a side issued no fencing token (kanuki " + tokens[0]
                    + ", by hand " + tokens[1] + ")");
        }
        return new Result(strategy, List.of("kanuki", "same", "bare"), results.wall(), results.cpu(),
                String.format(Locale.ROOT, "last tokens: kanuki %d, by hand %d", tokens[0], tokens[1]));
    }

    /** One round's directories and sides; removes its directories at the end. */
    private abstract static class FileRound implements Interleaved.Round {
        final Path kanukiDir;
        final Path handDir;
        final LockProvider provider;
        final DistributedLock lock;

        FileRound(String strategy) throws Exception {
            kanukiDir = BenchFiles.newTempDir("kanuki-interleaved-" + strategy);
            handDir = BenchFiles.newTempDir("kanuki-interleaved-hand-" + strategy);
            provider = LockProvider.open("file:" + kanukiDir + "?strategy=" + strategy);
            lock = provider.lock("bench");
        }

        @Override
        public void close() throws Exception {
            try {
                provider.close();
            } finally {
                BenchFiles.deleteQuietly(kanukiDir);
                BenchFiles.deleteQuietly(handDir);
            }
        }
    }

    private static Interleaved.Round osRound(long[] tokens) throws Exception {
        return new FileRound("os") {
            final OsByHand hand = new OsByHand(handDir.resolve("bench.lock"));

            @Override
            public Interleaved.Op[] ops() {
                return new Interleaved.Op[] {() -> {
                    try (LockHandle h = lock.tryAcquire().orElseThrow()) {
                        tokens[0] = h.fencingToken();
                    }
                }, () -> tokens[1] = hand.sameWork(), hand::bare};
            }

            @Override
            public void close() throws Exception {
                try (hand) {
                    super.close();
                }
            }
        };
    }

    private static Interleaved.Round ttlRound(String strategy, long[] tokens) throws Exception {
        return new FileRound(strategy) {
            final TtlByHand hand = new TtlByHand(handDir, strategy);

            @Override
            public Interleaved.Op[] ops() {
                return new Interleaved.Op[] {() -> {
                    try (LockHandle h = lock.acquire(TIMEOUT)) {
                        tokens[0] = h.fencingToken();
                    }
                }, () -> tokens[1] = hand.sameWork(), hand::bare};
            }
        };
    }

    private static Result handoff(int warmRounds, int rounds, int blocks, int block) throws Exception {
        List<String> kinds = List.of("processesKanukiFileOs", "processesRawFileChannel", "processesRawFileChannelWithRecord",
                HandoffPair.PROCESSES_PREFIX + "rawFileChannelWithRecordAndCheck");
        List<HandoffPair> pairs = new ArrayList<>();
        try {
            for (String kind : kinds) {
                pairs.add(HandoffPair.open(kind));
            }
            // the partners live for the whole run (a JVM start per round would cost seconds)
            List<double[]> results = Interleaved.measure(round -> {
                pairs.forEach(HandoffPair::checkPartner);
                return () -> pairs.stream().map(p -> (Interleaved.Op) p::step).toArray(Interleaved.Op[]::new);
            }, warmRounds, rounds, blocks, block);
            pairs.forEach(HandoffPair::checkPartner);
            // a step is a round trip, two handoffs
            results.replaceAll(r -> Arrays.stream(r).map(us -> us / 2).toArray());
            return new Result("os handoff between 2 JVMs, per handoff",
                    List.of("kanuki", "rawLock", "rawLockWithRecord", "rawLockWithRecordAndCheck"), results, List.of(),
                    String.format(Locale.ROOT, "the guarantees' floor, rawLockWithRecordAndCheck/rawLock %.2fx  [per round %s]",
                            Rounds.ratio(results, 3, 1), Rounds.perRound(results, 3, 1)));
        } finally {
            for (HandoffPair pair : pairs) {
                pair.close();
            }
        }
    }
}
