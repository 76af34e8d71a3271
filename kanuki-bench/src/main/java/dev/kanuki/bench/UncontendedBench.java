package dev.kanuki.bench;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.results.RunResult;

/**
 * Uncontended acquire + release, kanuki beside the raw primitive it wraps, in one run: what one
 * thread pays to take and give back a lock nobody else wants.
 *
 * <ul>
 *   <li>{@code kanukiMem} / {@code kanukiMemTry}: {@code mem:} with {@code acquire(Duration)} /
 *       {@code tryAcquire()}, then {@code close()}; raw: {@code rawReentrantLock}
 *       ({@code lock()} + {@code unlock()}). The difference is the engine's own overhead (gate,
 *       waiter, future, handle, bookkeeping).</li>
 *   <li>{@code kanukiFileOs} / {@code kanukiFileOsTry}: {@code file:DIR?strategy=os}; raw:
 *       {@code rawFileChannel} ({@code FileChannel.lock()} + {@code release()} on a channel
 *       opened once) and {@code rawFileChannelWithRecord}, the same plus reading, checking and
 *       rewriting the 128-byte owner/fencing record at offset 0 under the lock
 *       ({@link OwnerRecordByHand}): the fair baseline, since that is the work kanuki's
 *       {@code os} strategy does. Target: kanuki within 1.5x of it.
 *       {@code rawFileChannelWithRecordAndCheck} adds the one check kanuki makes beyond that
 *       (the lock file is still the one at its path), to show where the time goes.</li>
 * </ul>
 *
 * <p>Lock objects and providers are made once per trial; each benchmark has its own state, so a
 * backend that is missing (no kanuki-file on the class path) fails only its own benchmarks.
 *
 * <p>Run (a little under two minutes on a 2-vCPU VM):
 * <pre>
 * mvn -q -DskipTests -pl kanuki-bench -am package
 * java -jar kanuki-bench/target/benchmarks.jar UncontendedBench
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.UncontendedBench   # same, plus ratios
 * java -jar kanuki-bench/target/benchmarks.jar UncontendedBench -prof gc          # allocation per op
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class UncontendedBench {
    private static final Duration TIMEOUT = Duration.ofSeconds(5);
    private static final String NAME = "bench";

    /** {@code mem:}, the engine over an in-memory backend. */
    @State(Scope.Thread)
    public static class Mem {
        LockProvider provider;
        DistributedLock lock;

        @Setup(Level.Trial)
        public void setUp() {
            provider = LockProvider.open("mem:");
            lock = provider.lock(NAME);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            provider.close();
        }
    }

    /** {@code file:DIR?strategy=os} in a fresh temporary directory. */
    @State(Scope.Thread)
    public static class FileOs {
        Path dir;
        LockProvider provider;
        DistributedLock lock;

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            dir = BenchFiles.newTempDir("kanuki-bench-os");
            provider = LockProvider.open("file:" + dir + "?strategy=os");
            lock = provider.lock(NAME);
        }

        @TearDown(Level.Trial)
        public void tearDown() {
            if (provider != null) {
                provider.close();
            }
            BenchFiles.deleteQuietly(dir);
        }
    }

    /** A {@link ReentrantLock}. */
    @State(Scope.Thread)
    public static class Reentrant {
        final ReentrantLock lock = new ReentrantLock();
    }

    /** One lock file and its channel, opened once; the record helper for the fair baseline. */
    @State(Scope.Thread)
    public static class RawFile {
        Path dir;
        Path file;
        FileChannel channel;
        Object fileKey;
        final OwnerRecordByHand record = new OwnerRecordByHand();

        @Setup(Level.Trial)
        public void setUp() throws IOException {
            dir = BenchFiles.newTempDir("kanuki-bench-raw");
            file = dir.resolve("bench.lock");
            channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            fileKey = Files.readAttributes(file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
        }

        @TearDown(Level.Trial)
        public void tearDown() throws IOException {
            channel.close();
            BenchFiles.deleteQuietly(dir);
        }
    }

    @Benchmark
    public long kanukiMem(Mem s) {
        try (LockHandle h = s.lock.acquire(TIMEOUT)) {
            return h.fencingToken();
        }
    }

    @Benchmark
    public long kanukiMemTry(Mem s) {
        try (LockHandle h = s.lock.tryAcquire().orElseThrow()) {
            return h.fencingToken();
        }
    }

    @Benchmark
    public void rawReentrantLock(Reentrant s) {
        s.lock.lock();
        s.lock.unlock();
    }

    @Benchmark
    public long kanukiFileOs(FileOs s) {
        try (LockHandle h = s.lock.acquire(TIMEOUT)) {
            return h.fencingToken();
        }
    }

    @Benchmark
    public long kanukiFileOsTry(FileOs s) {
        try (LockHandle h = s.lock.tryAcquire().orElseThrow()) {
            return h.fencingToken();
        }
    }

    @Benchmark
    public void rawFileChannel(RawFile s) throws IOException {
        FileLock lock = s.channel.lock();
        lock.release();
    }

    @Benchmark
    public long rawFileChannelWithRecord(RawFile s) throws IOException {
        FileLock lock = s.channel.lock();
        try {
            return s.record.stamp(s.channel);
        } finally {
            lock.release();
        }
    }

    /**
     * Not a baseline kanuki must meet, but where its time goes: {@code rawFileChannelWithRecord}
     * plus the check kanuki's {@code os} strategy makes after every lock, that the path still
     * names the file it locked (one {@code lstat}, compare the file key), so a lock file that was
     * deleted or replaced is never trusted.
     */
    @Benchmark
    public long rawFileChannelWithRecordAndCheck(RawFile s) throws IOException {
        FileLock lock = s.channel.lock();
        try {
            BasicFileAttributes now = Files.readAttributes(s.file, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!now.isRegularFile() || !s.fileKey.equals(now.fileKey())) {
                throw new IOException(s.file + " was removed or replaced");
            }
            return s.record.stamp(s.channel);
        } finally {
            lock.release();
        }
    }

    /**
     * Runs this benchmark through JMH (any JMH option may be given) and prints kanuki's time
     * beside the raw primitive's, as ratios.
     *
     * @param args JMH command-line options
     * @throws Exception when JMH fails
     */
    public static void main(String[] args) throws Exception {
        List<RunResult> results = BenchSummary.run(UncontendedBench.class, args);
        BenchSummary.printAverages(results, List.of(
                new BenchSummary.Pair("kanukiMem", "rawReentrantLock"),
                new BenchSummary.Pair("kanukiMemTry", "rawReentrantLock"),
                new BenchSummary.Pair("kanukiFileOs", "rawFileChannel"),
                new BenchSummary.Pair("kanukiFileOs", "rawFileChannelWithRecord"),
                new BenchSummary.Pair("kanukiFileOsTry", "rawFileChannelWithRecord"),
                new BenchSummary.Pair("kanukiFileOs", "rawFileChannelWithRecordAndCheck")));
    }
}
