package dev.kanuki.file;

import dev.kanuki.LockStatus;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells whether a file is locked by reading the kernel's table of file locks ({@code /proc/locks}
 * on Linux) instead of trying a lock. A trial lock, however brief, makes a concurrent
 * {@code tryAcquire} (a {@code kanuki run -n}) see the lock busy; reading the table disturbs
 * nobody.
 *
 * <p>A line reads {@code 1: POSIX  ADVISORY  WRITE 4242 fd:01:1234567 0 EOF}: kind, mode,
 * access, pid, device major:minor (hex) and inode, range; waiters' lines carry {@code ->}.
 * Only fcntl locks ({@code POSIX}, {@code OFDLCK}) count: {@code flock} locks do not exclude
 * them. On file systems where {@code stat} reports another device or inode than the lock table
 * (btrfs subvolumes, some overlays) the table cannot be matched: {@link #usableIn} checks that
 * once per directory with a lock of its own, and callers fall back to a trial lock.
 */
final class KernelLockTable {
    private static final Logger log = LoggerFactory.getLogger(KernelLockTable.class);
    private static final Path PROC_LOCKS = Path.of("/proc/locks");

    private KernelLockTable() {
    }

    /**
     * @param file a lock file
     * @return FREE, HELD (someone holds a write lock) or HELD_SHARED (only read locks), or null
     *     when the table or the file's identity cannot be read
     */
    static LockStatus.State stateOf(Path file) {
        return stateOf(file, snapshot());
    }

    /**
     * @param table from {@link #snapshot()}, read once for many files ({@code status} of a whole
     *     directory reads the table once, not once per file)
     */
    static LockStatus.State stateOf(Path file, java.util.Map<FileId, LockStatus.State> table) {
        FileId id = FileId.of(file);
        if (id == null || table == null) {
            return null;
        }
        return table.getOrDefault(id, LockStatus.State.FREE);
    }

    /** {@return every locked file of the table with its state, or null when the table cannot be read} */
    static java.util.Map<FileId, LockStatus.State> snapshot() {
        List<String> lines = readTable();
        if (lines == null) {
            return null;
        }
        java.util.Map<FileId, LockStatus.State> table = new java.util.HashMap<>();
        for (String line : lines) {
            Entry e = Entry.parse(line);
            if (e != null) {
                FileId id = new FileId(e.major(), e.minor(), e.inode());
                if (e.write()) {
                    table.put(id, LockStatus.State.HELD);
                } else {
                    table.putIfAbsent(id, LockStatus.State.HELD_SHARED);
                }
            }
        }
        return table;
    }

    /**
     * Checks that the table shows a lock this process takes on a scratch file in
     * {@code directory}, so that its entries can be matched with files there.
     *
     * @return false when the table is missing, unreadable or does not match this file system
     */
    static boolean usableIn(Path directory) {
        if (!Files.isReadable(PROC_LOCKS)) {
            return false;
        }
        Path scratch = null;
        try {
            scratch = Files.createTempFile(directory, ".kanuki-lock-table-", ".tmp");
            try (FileChannel channel = FileChannel.open(scratch, StandardOpenOption.WRITE);
                 FileLock lock = channel.lock()) {
                return stateOf(scratch) == LockStatus.State.HELD;
            }
        } catch (IOException | RuntimeException e) {
            log.debug("cannot check {} against {}: {}", PROC_LOCKS, directory, e.toString());
            return false;
        } finally {
            if (scratch != null) {
                try {
                    Files.deleteIfExists(scratch);
                } catch (IOException e) {
                    log.debug("cannot remove {}", scratch, e);
                }
            }
        }
    }

    private static List<String> readTable() {
        try {
            // One large read where possible: the kernel walks its whole lock list again at the
            // start of every read() of this file, so small reads make a long table quadratic.
            try (FileChannel in = FileChannel.open(PROC_LOCKS, StandardOpenOption.READ)) {
                java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocate(1 << 20);
                while (in.read(buffer) > 0) {
                    if (!buffer.hasRemaining()) {
                        buffer = java.nio.ByteBuffer.allocate(buffer.capacity() * 2).put(buffer.flip());
                    }
                }
                return List.of(new String(buffer.array(), 0, buffer.position(), java.nio.charset.StandardCharsets.US_ASCII)
                        .split("\n"));
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /**
     * A file's device (as major and minor numbers) and inode. equals and hashCode are written out:
     * on Java 17 a record's generated ones leave its class in a JDK-wide method-handle cache,
     * which would keep a redeployed application's class loader alive.
     */
    record FileId(long major, long minor, long inode) {
        @Override
        public boolean equals(Object o) {
            return o instanceof FileId f && f.major == major && f.minor == minor && f.inode == inode;
        }

        @Override
        public int hashCode() {
            return Long.hashCode(inode * 31 + major * 1_000_003 + minor);
        }

        static FileId of(Path file) {
            try {
                return of(Files.readAttributes(file, "unix:dev,ino", LinkOption.NOFOLLOW_LINKS)); // one stat
            } catch (IOException | UnsupportedOperationException | IllegalArgumentException | ClassCastException e) {
                return null;
            }
        }

        /** @param unix attributes read with {@code unix:dev,ino} (and maybe more) */
        static FileId of(java.util.Map<String, Object> unix) {
            long dev = ((Number) unix.get("dev")).longValue();
            long ino = ((Number) unix.get("ino")).longValue();
            // glibc's major() and minor() of a stat() st_dev
            long major = ((dev >>> 8) & 0xfffL) | ((dev >>> 32) & ~0xfffL);
            long minor = (dev & 0xffL) | ((dev >>> 12) & ~0xffL);
            return new FileId(major, minor, ino);
        }
    }

    /** One granted lock of the table. */
    record Entry(boolean write, long major, long minor, long inode) {
        /** {@return the entry, or null for a waiter's line, another kind of lock, or a line not understood} */
        static Entry parse(String line) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 6 || f[1].equals("->")) {
                return null;
            }
            if (!f[1].equals("POSIX") && !f[1].equals("OFDLCK")) {
                return null;
            }
            String[] dev = f[5].split(":");
            if (dev.length != 3) {
                return null;
            }
            try {
                return new Entry(f[3].equals("WRITE"), Long.parseLong(dev[0], 16), Long.parseLong(dev[1], 16),
                        Long.parseUnsignedLong(dev[2]));
            } catch (NumberFormatException e) {
                return null;
            }
        }

        boolean matches(FileId id) {
            return inode == id.inode() && major == id.major() && minor == id.minor();
        }
    }
}
