package dev.kanuki.torture;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.io.BufferedOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The child process of a {@link Torture} run: increments the shared counter file
 * {@code iterations} times, each time under the lock (unless the URI is {@code none}), and logs
 * every entry to and exit from the critical section so the parent can find overlaps.
 *
 * <p>Arguments, in order: backend URI or {@code none}, lock name, counter file, overlap log,
 * iterations, hold time in nanoseconds, acquire timeout in nanoseconds, worker index, result
 * file, barrier directory. Exits 0 when every iteration completed; on any failure prints one
 * line (plus a stack trace for unexpected failures) to standard error and exits 1. Exits 2 when
 * its parent process dies.
 */
public final class TortureWorker {
    /** A worker creates {@code ready-<index>} in the barrier directory once it is warmed up. */
    static final String READY_PREFIX = "ready-";
    /** The parent creates this file in the barrier directory when every worker is ready. */
    static final String GO_FILE = "go";
    /** How long a ready worker waits for the start signal before giving up. */
    static final Duration GO_WAIT = Duration.ofMinutes(3);
    /** The value of the URI argument that means "take no lock". */
    static final String NO_LOCK = "none";
    static final int ARG_COUNT = 10;

    private TortureWorker() {
    }

    /**
     * Runs one worker; see the class comment for the arguments. Always ends the JVM.
     *
     * @param args the arguments described in the class comment
     */
    public static void main(String[] args) {
        int code;
        String who = args.length > 7 ? "torture worker " + args[7] : "torture worker";
        try {
            if (args.length != ARG_COUNT) {
                throw new IllegalArgumentException("expected " + ARG_COUNT + " arguments, got " + args.length
                        + " (this program is started by Torture.run)");
            }
            watchParent();
            run(args);
            code = 0;
        } catch (LockException | IllegalArgumentException | IOException | IllegalStateException e) {
            System.err.println("kanuki " + who + ": " + e.getMessage());
            if (!(e instanceof LockException) && !(e instanceof IllegalArgumentException)) {
                e.printStackTrace(System.err);
            }
            code = 1;
        } catch (Throwable e) {
            System.err.println("kanuki " + who + ": unexpected failure: " + e);
            e.printStackTrace(System.err);
            code = 1;
        }
        System.err.flush();
        System.exit(code);
    }

    private static void run(String[] args) throws IOException, InterruptedException {
        String uri = args[0];
        String lockName = args[1];
        Path counterFile = Path.of(args[2]);
        Path logFile = Path.of(args[3]);
        int iterations = Integer.parseInt(args[4]);
        long holdNanos = Long.parseLong(args[5]);
        Duration acquireTimeout = Duration.ofNanos(Long.parseLong(args[6]));
        int index = Integer.parseInt(args[7]);
        Path resultFile = Path.of(args[8]);
        Path barrierDir = Path.of(args[9]);

        long[] latencies = new long[iterations];
        LockProvider provider = NO_LOCK.equals(uri) ? null : LockProvider.open(uri);
        try (FileChannel counter = FileChannel.open(counterFile, StandardOpenOption.READ,
                StandardOpenOption.WRITE, StandardOpenOption.CREATE);
             FileChannel log = FileChannel.open(logFile, StandardOpenOption.WRITE,
                     StandardOpenOption.CREATE, StandardOpenOption.APPEND)) {
            DistributedLock lock = provider == null ? null : provider.lock(lockName);
            // Workers warm up while others are still starting, so a tight acquire timeout
            // (meant for the measured loop) must not fail the warm-up.
            Duration warmUpTimeout = acquireTimeout.compareTo(GO_WAIT) > 0 ? acquireTimeout : GO_WAIT;
            warmUp(lock, warmUpTimeout, counter, index);
            Files.createFile(barrierDir.resolve(READY_PREFIX + index));
            awaitGo(barrierDir.resolve(GO_FILE));

            for (int i = 0; i < iterations; i++) {
                long t0 = System.nanoTime();
                LockHandle handle = lock == null ? null : lock.acquire(acquireTimeout);
                try {
                    latencies[i] = System.nanoTime() - t0;
                    long token = handle == null ? 0 : handle.fencingToken();
                    append(log, "E " + index + " " + i + " " + token + "\n");
                    long value = readCounter(counter, counterFile);
                    if (holdNanos > 0) {
                        pause(holdNanos);
                    }
                    writeCounter(counter, value + 1);
                    append(log, "X " + index + " " + i + " " + token + "\n");
                } finally {
                    if (handle != null) {
                        handle.close();
                    }
                }
            }
        } finally {
            if (provider != null) {
                provider.close();
            }
        }
        writeLatencies(resultFile, latencies);
    }

    /**
     * Loads and compiles what the loop uses (the lock path, string concatenation, file reads)
     * before the start signal, so that the workers' first iterations really race.
     */
    private static void warmUp(DistributedLock lock, Duration acquireTimeout, FileChannel counter, int index)
            throws IOException {
        for (int i = 0; i < 2; i++) {
            if (lock != null) {
                lock.acquire(acquireTimeout).close();
            }
            String line = "E " + index + " " + i + " " + 0L + "\n";
            StandardCharsets.US_ASCII.encode(line);
            readCounter(counter, null);
            pause(1_000);
        }
    }

    private static void awaitGo(Path go) throws IOException {
        long deadline = System.nanoTime() + GO_WAIT.toNanos();
        while (!Files.exists(go)) {
            if (System.nanoTime() - deadline > 0) {
                throw new IOException("no start signal (" + go + ") within " + GO_WAIT.toSeconds()
                        + "s; was the parent stopped?");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    /** Appends one line with a single write on an APPEND channel, so lines never interleave. */
    private static void append(FileChannel log, String line) throws IOException {
        ByteBuffer bytes = StandardCharsets.US_ASCII.encode(line);
        int written = log.write(bytes);
        if (bytes.hasRemaining()) {
            throw new IOException("short write to the overlap log (" + written + " of " + line.length() + " bytes)");
        }
    }

    /** {@return the counter's value: a decimal number, 0 when the file is empty} */
    static long readCounter(FileChannel counter, Path file) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(32);
        long position = 0;
        while (true) {
            if (!buf.hasRemaining()) {
                ByteBuffer bigger = ByteBuffer.allocate(buf.capacity() * 2);
                buf.flip();
                bigger.put(buf);
                buf = bigger;
            }
            int n = counter.read(buf, position);
            if (n < 0) {
                break;
            }
            position += n;
        }
        buf.flip();
        String text = StandardCharsets.US_ASCII.decode(buf).toString().trim();
        if (text.isEmpty()) {
            return 0;
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            throw new IllegalStateException("counter file " + file + " holds '" + text + "', not a number");
        }
    }

    /**
     * Overwrites the counter in place (truncate, then write), deliberately without a rename, so
     * that without a lock updates are lost. The number is zero-padded to a fixed width: racing
     * writers then replace each other's digits whole instead of leaving a mix such as "5000"
     * (a "5" written over "1000"), and the counter can only come out too low, never too high.
     */
    private static void writeCounter(FileChannel counter, long value) throws IOException {
        ByteBuffer bytes = StandardCharsets.US_ASCII.encode(String.format(Locale.ROOT, "%019d", value));
        counter.truncate(0);
        long position = 0;
        while (bytes.hasRemaining()) {
            position += counter.write(bytes, position);
        }
    }

    /** Sleeps for a short time with sub-millisecond precision (Thread.sleep rounds to ms). */
    private static void pause(long nanos) {
        long deadline = System.nanoTime() + nanos;
        long left = nanos;
        while (left > 0) {
            LockSupport.parkNanos(left);
            left = deadline - System.nanoTime();
        }
    }

    private static void writeLatencies(Path resultFile, long[] latencies) throws IOException {
        try (OutputStream file = Files.newOutputStream(resultFile);
             DataOutputStream out = new DataOutputStream(new BufferedOutputStream(file))) {
            out.writeInt(latencies.length);
            for (long latency : latencies) {
                out.writeLong(latency);
            }
        }
    }

    /** Ends this worker when the parent dies, so no orphan keeps running or holding the lock. */
    private static void watchParent() {
        Optional<ProcessHandle> parent = ProcessHandle.current().parent();
        if (parent.isEmpty()) {
            return;
        }
        Thread watcher = new Thread(() -> {
            while (true) {
                if (!parent.get().isAlive()) {
                    System.err.println("kanuki torture worker: the parent process is gone; stopping");
                    System.exit(2);
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500));
            }
        }, "kanuki-torture-parent-watch");
        watcher.setDaemon(true);
        watcher.start();
    }
}
