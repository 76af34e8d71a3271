package dev.kanuki;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * Run in a child JVM with a small heap by {@link LockedFileStreamingTest}: writes a file of
 * {@code SIZE} bytes through {@link LockedFile#updateStream}, reads it back through
 * {@link LockedFile#readStream}, updates it again (copy plus one byte), and checks every byte.
 * Prints "ok PEAK_HEAP_BYTES" and exits 0, or exits non-zero (an OutOfMemoryError included).
 *
 * <p>Arguments: the file, its size in bytes.
 */
public final class LockedFileStreamingMain {
    private LockedFileStreamingMain() {
    }

    /** A byte that depends on its position, so a misplaced or lost buffer shows. */
    static int at(long position) {
        return (int) ((position * 31 + (position >>> 20)) % 251);
    }

    public static void main(String[] args) throws Exception {
        Path file = Path.of(args[0]);
        long size = Long.parseLong(args[1]);
        try (LockProvider provider = LockProvider.open("mem:streaming")) {
            LockedFile locked = LockedFile.of(provider.lock("big"), file);
            Duration wait = Duration.ofSeconds(30);
            boolean written = locked.updateStream(wait, (current, next) -> {
                write(next, size);
                return true;
            });
            check(written, "the first update was not committed");
            check(Files.size(file) == size, "the plain file has " + Files.size(file) + " bytes, not " + size);
            check(locked.readStream(wait, in -> verify(in, size)), "the content read back differs");
            locked.updateStream(wait, (current, next) -> {
                current.transferTo(next);
                next.write('!');
                return true;
            });
            check(locked.readStream(wait, in -> verify(in, size) && in.read() == '!' && in.read() == -1),
                    "the content after the second update differs");
            check(Files.size(file) == size + 1, "the plain file has " + Files.size(file) + " bytes after the second update");
        }
        long peak = 0;
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                peak += pool.getPeakUsage().getUsed();
            }
        }
        System.out.println("ok " + peak);
    }

    private static void write(OutputStream out, long size) throws IOException {
        byte[] chunk = new byte[8192];
        for (long p = 0; p < size; ) {
            int n = (int) Math.min(chunk.length, size - p);
            for (int i = 0; i < n; i++) {
                chunk[i] = (byte) at(p + i);
            }
            out.write(chunk, 0, n);
            p += n;
        }
    }

    /** {@return whether the first {@code size} bytes are the pattern} */
    private static boolean verify(InputStream in, long size) throws IOException {
        byte[] chunk = new byte[8192];
        long p = 0;
        while (p < size) {
            int n = in.read(chunk, 0, (int) Math.min(chunk.length, size - p));
            if (n < 0) {
                return false;
            }
            for (int i = 0; i < n; i++) {
                if (chunk[i] != (byte) at(p + i)) {
                    return false;
                }
            }
            p += n;
        }
        return true;
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            System.err.println(what);
            System.exit(2);
        }
    }
}
