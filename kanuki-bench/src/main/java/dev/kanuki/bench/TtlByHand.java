package dev.kanuki.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HexFormat;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32C;

/**
 * The raw file-system work of one ttl strategy of {@code file:} ({@code mkdir}, {@code symlink},
 * {@code rename}, {@code create}, {@code queue}), written by hand for {@link FileStrategyBench}.
 *
 * <ul>
 *   <li>{@link #bare()}: only the atomic step and its undo (mkdir+rmdir, symlink+unlink, rename
 *       there and back, create(CREATE_NEW)+delete, append+read+append for the queue). The
 *       floor, with no owner record and no fencing.</li>
 *   <li>{@link #sameWork()}: what a careful hand-written lock of the same strategy must do to
 *       give what kanuki gives: the entry carries a one-line owner record with a CRC
 *       (kanuki-file's {@code TtlRecord} format); the next fencing token is taken by reading the
 *       hint file {@code STEM.fence}, renaming {@code STEM.fence.N} to {@code STEM.fence.N+1} and
 *       rewriting the hint; the record is read back after the token (the ownership check); at
 *       release the record is read again (still mine?) and the entry removed. kanuki's extra
 *       steps beyond this are listed in {@code kanuki-bench/README.md} ("Where kanuki's time
 *       goes"); they are not here.</li>
 * </ul>
 *
 * One instance per directory; single-threaded; not a lock anyone else could share.
 */
final class TtlByHand {
    /** The strategies, as {@code file:}'s {@code strategy} option names them. */
    static final String[] STRATEGIES = {"mkdir", "symlink", "rename", "create", "queue"};
    /** kanuki-file's queue is compacted past this size; the hand-written one is truncated. */
    private static final long QUEUE_COMPACT_AT = 32 * 1024;
    private static final String STEM = "bench.0123456789abcdef0123456789abcdef";
    private static final long LEASE_MS = 30_000;

    private final String strategy;
    private final Path entry;
    private final Path free;
    private final Path owner;
    private final Path ownerTemp;
    private final Path hint;
    private final Path dir;
    private final long pid = ProcessHandle.current().pid();
    private final String host;
    private final ByteBuffer readBuffer = ByteBuffer.allocate(64 * 1024);

    TtlByHand(Path dir, String strategy) throws IOException {
        this.dir = dir;
        this.strategy = strategy;
        this.entry = dir.resolve(STEM + switch (strategy) {
            case "mkdir" -> ".lockdir";
            case "symlink" -> ".lnk";
            case "rename" -> ".held";
            case "create" -> ".lck";
            case "queue" -> ".queue";
            default -> throw new IllegalArgumentException("unknown strategy " + strategy);
        });
        this.free = dir.resolve(STEM + ".free");
        this.owner = entry.resolve("owner");
        this.ownerTemp = entry.resolve("owner.tmp");
        this.hint = dir.resolve(STEM + ".fence");
        this.host = hostName();
        if (strategy.equals("rename")) {
            Files.writeString(free, "K1 free\n");
        }
        Files.createFile(fence(0));
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return ManagementFactory.getRuntimeMXBean().getName();
        }
    }

    private Path fence(long n) {
        return dir.resolve(STEM + ".fence." + n);
    }

    /** The atomic step and its undo, nothing else. */
    void bare() throws IOException {
        switch (strategy) {
            case "mkdir" -> {
                Files.createDirectory(entry);
                Files.delete(entry);
            }
            case "symlink" -> {
                Files.createSymbolicLink(entry, Path.of("K1"));
                Files.delete(entry);
            }
            case "rename" -> {
                Files.move(free, entry, StandardCopyOption.ATOMIC_MOVE);
                Files.move(entry, free, StandardCopyOption.ATOMIC_MOVE);
            }
            case "create" -> {
                FileChannel.open(entry, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE).close();
                Files.delete(entry);
            }
            case "queue" -> {
                String id = newId();
                append("A " + id + "\n");
                if (readQueue().length() > QUEUE_COMPACT_AT) {
                    truncateQueue();
                }
                append("R " + id + "\n");
            }
            default -> throw new IllegalStateException(strategy);
        }
    }

    /**
     * Acquire with owner record and fencing token, then release, as described in the class
     * comment.
     *
     * @return the fencing token
     */
    long sameWork() throws IOException {
        String id = newId();
        long now = System.currentTimeMillis();
        String record = record(id, now);
        long token;
        switch (strategy) {
            case "mkdir" -> {
                Files.createDirectory(entry);
                writeNew(ownerTemp, record);
                Files.move(ownerTemp, owner, StandardCopyOption.ATOMIC_MOVE);
                token = nextToken();
                check(readFile(owner), id);
                check(readFile(owner), id);
                Files.delete(owner);
                Files.delete(entry);
            }
            case "symlink" -> {
                Files.createSymbolicLink(entry, Path.of(record));
                token = nextToken();
                check(Files.readSymbolicLink(entry).toString(), id);
                check(Files.readSymbolicLink(entry).toString(), id);
                Files.delete(entry);
            }
            case "rename" -> {
                Files.move(free, entry, StandardCopyOption.ATOMIC_MOVE);
                writeOver(entry, record);
                token = nextToken();
                check(readFile(entry), id);
                check(readFile(entry), id);
                writeOver(entry, "K1 free");
                Files.move(entry, free, StandardCopyOption.ATOMIC_MOVE);
            }
            case "create" -> {
                writeNew(entry, record);
                token = nextToken();
                check(readFile(entry), id);
                check(readFile(entry), id);
                Files.delete(entry);
            }
            case "queue" -> {
                String before = readQueue();
                if (before.length() > QUEUE_COMPACT_AT) {
                    truncateQueue();
                }
                append("A " + record + "\n");
                checkQueueHead(readQueue(), id);
                token = nextToken();
                checkQueueHead(readQueue(), id);
                checkQueueHead(readQueue(), id);
                append("R " + id + "\n");
            }
            default -> throw new IllegalStateException(strategy);
        }
        return token;
    }

    /** The fencing counter kanuki-file's ttl strategies keep: read hint, rename N to N+1, write hint. */
    private long nextToken() throws IOException {
        long n = 0;
        if (Files.exists(hint, LinkOption.NOFOLLOW_LINKS)) {
            String text = new String(Files.readAllBytes(hint), StandardCharsets.US_ASCII).trim();
            n = Long.parseLong(text);
        }
        Files.move(fence(n), fence(n + 1), StandardCopyOption.ATOMIC_MOVE);
        try (FileChannel c = FileChannel.open(hint, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS)) {
            c.write(ByteBuffer.wrap(String.format("%020d\n", n + 1).getBytes(StandardCharsets.US_ASCII)), 0);
        }
        return n + 1;
    }

    private String record(String id, long now) {
        String head = "K1 " + id + " " + pid + " " + now + " " + (now + LEASE_MS) + " " + host + " bench";
        CRC32C crc = new CRC32C();
        crc.update(head.getBytes(StandardCharsets.UTF_8));
        return head + " " + String.format("%08x", crc.getValue());
    }

    private static String newId() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        return HexFormat.of().toHexDigits(r.nextLong()) + HexFormat.of().toHexDigits(r.nextLong());
    }

    private static void check(String text, String id) throws IOException {
        if (!text.startsWith("K1 " + id + " ")) {
            throw new IOException("the record is not mine: " + text);
        }
    }

    /** The queue's holder is the first arrival not removed; in a single-user queue, the last arrival. */
    private static void checkQueueHead(String text, String id) throws IOException {
        int mine = text.lastIndexOf("A K1 " + id + " ");
        if (mine < 0 || text.indexOf("\nR " + id, mine) >= 0) {
            throw new IOException("not at the head of the queue");
        }
    }

    private static void writeNew(Path file, String text) throws IOException {
        try (FileChannel c = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS)) {
            c.write(ByteBuffer.wrap((text + "\n").getBytes(StandardCharsets.UTF_8)), 0);
        }
    }

    private static void writeOver(Path file, String text) throws IOException {
        byte[] bytes = (text + "\n").getBytes(StandardCharsets.UTF_8);
        try (FileChannel c = FileChannel.open(file, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
            c.write(ByteBuffer.wrap(bytes), 0);
            c.truncate(bytes.length);
        }
    }

    private String readFile(Path file) throws IOException {
        try (FileChannel c = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            readBuffer.clear();
            while (readBuffer.hasRemaining() && c.read(readBuffer) > 0) {
                // records are small
            }
            return new String(readBuffer.array(), 0, readBuffer.position(), StandardCharsets.UTF_8);
        }
    }

    private String readQueue() throws IOException {
        try {
            return readFile(entry);
        } catch (NoSuchFileException e) {
            return "";
        }
    }

    /** The hand-written queue's compaction: it is alone, so it simply empties the file. */
    private void truncateQueue() throws IOException {
        try (FileChannel c = FileChannel.open(entry, StandardOpenOption.WRITE)) {
            c.truncate(0);
        }
    }

    private void append(String line) throws IOException {
        try (FileChannel c = FileChannel.open(entry, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
                LinkOption.NOFOLLOW_LINKS)) {
            c.write(ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8)));
        }
    }
}
