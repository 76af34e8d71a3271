package dev.kanuki.sqlite;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import java.util.Optional;

/**
 * Tells whether a lock database's write lock is held by reading the kernel's table of file locks
 * ({@code /proc/locks} on Linux) instead of trying it. A trial {@code BEGIN IMMEDIATE}, however
 * brief, makes a concurrent {@code tryAcquire} (a {@code kanuki run -n}) see the lock busy; reading
 * the table disturbs nobody.
 *
 * <p>In WAL mode SQLite's write lock is an fcntl write lock on byte 120 of the {@code -shm} file
 * (its first lock byte: {@code (22 + SQLITE_SHM_NLOCK) * 4}), and every open connection holds a
 * read lock on byte 128 (the "dead man switch") for as long as it is open. The caller has the
 * database open itself, so the table must show that read lock: when it shows nothing for the file
 * (the table cannot be matched with this file system's device numbers, or is not there), the
 * answer is empty and the caller falls back to a trial lock. A line reads
 * {@code 1: POSIX  ADVISORY  WRITE 4242 fd:01:1234567 120 120}: kind, mode, access, pid, device
 * major:minor (hex) and inode, range; waiters' lines carry {@code ->}.
 */
final class WalWriteLock {
    private static final Path PROC_LOCKS = Path.of("/proc/locks");
    /** The byte of the {@code -shm} file whose write lock is the database's write lock. */
    static final long WRITE_BYTE = 120;

    private WalWriteLock() {
    }

    /**
     * @param database a lock database in WAL mode that the caller has open
     * @return whether its write lock is held (by any process, this one included), or empty when
     *     the kernel's table cannot tell
     */
    static Optional<Boolean> isHeld(Path database) {
        long major;
        long minor;
        long inode;
        try {
            Map<String, Object> unix = Files.readAttributes(database.resolveSibling(database.getFileName() + "-shm"),
                    "unix:dev,ino", LinkOption.NOFOLLOW_LINKS);
            long dev = ((Number) unix.get("dev")).longValue();
            inode = ((Number) unix.get("ino")).longValue();
            // glibc's major() and minor() of a stat() st_dev
            major = ((dev >>> 8) & 0xfffL) | ((dev >>> 32) & ~0xfffL);
            minor = (dev & 0xffL) | ((dev >>> 12) & ~0xffL);
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
            return Optional.empty();
        }
        String table = read();
        if (table == null) {
            return Optional.empty();
        }
        boolean seen = false;
        for (String line : table.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 8 || f[1].equals("->") || !(f[1].equals("POSIX") || f[1].equals("OFDLCK"))) {
                continue;
            }
            String[] id = f[5].split(":");
            try {
                if (id.length != 3 || Long.parseLong(id[0], 16) != major || Long.parseLong(id[1], 16) != minor
                        || Long.parseUnsignedLong(id[2]) != inode) {
                    continue;
                }
                seen = true;
                long start = Long.parseLong(f[6]);
                long end = f[7].equals("EOF") ? Long.MAX_VALUE : Long.parseLong(f[7]);
                if (f[3].equals("WRITE") && start <= WRITE_BYTE && WRITE_BYTE <= end) {
                    return Optional.of(true);
                }
            } catch (NumberFormatException e) {
                // a line not understood: not ours to judge
            }
        }
        return seen ? Optional.of(false) : Optional.empty();
    }

    /** {@return the table, or null when it cannot be read (not Linux)} */
    private static String read() {
        // One large read where possible: the kernel walks its whole lock list again at the start
        // of every read() of this file, so small reads make a long table quadratic.
        try (FileChannel in = FileChannel.open(PROC_LOCKS, StandardOpenOption.READ)) {
            ByteBuffer buffer = ByteBuffer.allocate(1 << 16);
            while (in.read(buffer) > 0) {
                if (!buffer.hasRemaining()) {
                    buffer = ByteBuffer.allocate(buffer.capacity() * 2).put(buffer.flip());
                }
            }
            return new String(buffer.array(), 0, buffer.position(), StandardCharsets.US_ASCII);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
