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
 * {@code rename}, {@code create}, {@code queue}), written by hand for {@link FileInterleaved} and
 * {@link FileStrategyBench}.
 *
 * <ul>
 *   <li>{@link #bare()}: only the atomic step and its undo (mkdir+rmdir, symlink+unlink, rename
 *       there and back, create(CREATE_NEW)+delete, append+read+append for the queue). The
 *       floor, with no owner record and no fencing.</li>
 *   <li>{@link #sameWork()}: the syscalls kanuki-file makes for one uncontended acquire +
 *       {@code fencingToken()} + release of that strategy today (read off {@code strace -f}),
 *       written out once each: the entry made by its atomic step; the directory's fencing counter
 *       moved by one rename ({@code kanuki-fence.N} to {@code N+1}, N remembered as kanuki's
 *       {@code DirectoryFence} remembers it); the owner record with the token written through a
 *       new file (or link) renamed over the old one; the record read back (still mine?), read
 *       again at release, and the entry removed as kanuki removes it (mkdir: renamed aside, then
 *       emptied and removed; rename: its marker and token removed; queue: a removal line, then the
 *       empty queue file removed under its breaker file). For {@code queue}, also the checks
 *       that refuse links and planted files, one {@code lstat} before and one after each open
 *       (a look shared by consecutive opens of the same file, reads opened read-write and read
 *       positionally so that a FIFO never blocks), because a queue without them could write
 *       through a hard link or hang on a FIFO: the ratio is then the Java around the same
 *       syscalls. The other strategies leave those {@code lstat}s out, so their ratios also
 *       show the checks' cost.</li>
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
    private final Path marker;
    private final Path breaker;
    private long fenceValue;
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
        this.marker = dir.resolve(STEM + ".init");
        this.breaker = dir.resolve(STEM + ".breaker");
        this.host = hostName();
        this.fenceValue = System.currentTimeMillis() * 1000;
        Files.createFile(fence(fenceValue));
    }

    private static String hostName() {
        try {
            return InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            return ManagementFactory.getRuntimeMXBean().getName();
        }
    }

    private Path fence(long n) {
        return dir.resolve("kanuki-fence." + n);
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
                // a token of its own, made once and kept (sameWork makes and removes its own)
                Path bareFree = dir.resolve("bare.free");
                Path bareHeld = dir.resolve("bare.held");
                if (!Files.exists(bareFree, LinkOption.NOFOLLOW_LINKS)) {
                    writeNew(bareFree, "K1 free");
                }
                Files.move(bareFree, bareHeld, StandardCopyOption.ATOMIC_MOVE);
                Files.move(bareHeld, bareFree, StandardCopyOption.ATOMIC_MOVE);
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
     * Acquire with owner record and fencing token, then release, with kanuki-file's syscalls, as
     * described in the class comment.
     *
     * @return the fencing token
     */
    long sameWork() throws IOException {
        String id = newId();
        long now = System.currentTimeMillis();
        long token;
        switch (strategy) {
            case "mkdir" -> {
                Files.createDirectory(entry);
                token = nextToken();
                replace(owner, record(id, now, token), id);
                check(readFile(owner), id);
                check(readFile(owner), id);
                Path trash = dir.resolve(entry.getFileName() + ".removed." + id);
                Files.move(entry, trash, StandardCopyOption.ATOMIC_MOVE);
                Files.delete(trash.resolve("owner"));
                Files.delete(trash);
            }
            case "symlink" -> {
                Files.createSymbolicLink(entry, Path.of(record(id, now, 0)));
                token = nextToken();
                Path temp = dir.resolve(entry.getFileName() + ".tmp." + id);
                Files.createSymbolicLink(temp, Path.of(record(id, now, token)));
                Files.move(temp, entry, StandardCopyOption.ATOMIC_MOVE);
                check(Files.readSymbolicLink(entry).toString(), id);
                check(Files.readSymbolicLink(entry).toString(), id);
                Files.delete(entry);
            }
            case "rename" -> {
                // no file is left for a free name: the marker and the free token are made anew
                FileChannel.open(marker, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE).close();
                writeNew(free, "K1 free");
                Files.move(free, entry, StandardCopyOption.ATOMIC_MOVE);
                token = nextToken();
                replace(entry, record(id, now, token), id);
                check(readFile(entry), id);
                check(readFile(entry), id);
                Files.delete(marker);
                Files.delete(entry);
            }
            case "create" -> {
                FileChannel.open(entry, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                        LinkOption.NOFOLLOW_LINKS).close();
                token = nextToken();
                replace(entry, record(id, now, token), id);
                check(readFile(entry), id);
                check(readFile(entry), id);
                Files.delete(entry);
            }
            case "queue" -> {
                // Each open is bracketed by the refusal checks (one lstat each), a look shared
                // between consecutive opens of the same file, as kanuki-file does.
                look(entry, false);
                Object key = appendChecked("A " + record(id, now, 0) + "\n");
                checkQueueHead(readQueueChecked(key), id);
                token = nextToken();
                checkQueueHead(readQueueChecked(key), id);
                appendChecked("T " + id + " " + token + "\n");
                look(entry, true);
                key = appendChecked("R " + id + "\n");
                readQueueChecked(key);
                // the queue is empty now: removed under its breaker file, as kanuki compacts it
                writeNew(breaker, record(id, now, 0));
                try (FileChannel c = openForRead(entry)) {
                    same(key, look(entry, true));
                    c.size();
                    readAll(c);
                }
                Files.delete(entry);
                Object breakerKey = look(breaker, true);
                String mine;
                try (FileChannel c = openForRead(breaker)) {
                    mine = readAll(c);
                }
                same(breakerKey, look(breaker, true));
                check(mine, id);
                Files.delete(breaker);
            }
            default -> throw new IllegalStateException(strategy);
        }
        return token;
    }

    /** The directory's fencing counter as kanuki-file's ttl strategies move it: one rename from the value last seen. */
    private long nextToken() throws IOException {
        Files.move(fence(fenceValue), fence(fenceValue + 1), StandardCopyOption.ATOMIC_MOVE);
        return ++fenceValue;
    }

    /** A new file with the text, renamed over the target (never written in place). */
    private static void replace(Path target, String text, String id) throws IOException {
        Path temp = target.resolveSibling(target.getFileName() + ".tmp." + id);
        writeNew(temp, text);
        Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
    }

    private String record(String id, long now, long token) {
        String head = "K1 " + id + " " + pid + " " + now + " " + (now + LEASE_MS) + " " + host + " bench"
                + (token > 0 ? " " + token : "");
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

    /**
     * The check kanuki-file makes at each open of a file in the lock directory, by hand: one
     * {@code lstat} that refuses anything but a regular file with a single link (a planted FIFO,
     * device or link, a hard link to a victim).
     *
     * @return the file's identity, or null when absent and {@code mustExist} is false
     */
    private static Object look(Path file, boolean mustExist) throws IOException {
        java.util.Map<String, Object> attrs;
        try {
            attrs = Files.readAttributes(file, "unix:mode,nlink,fileKey", LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            if (mustExist) {
                throw e;
            }
            return null;
        }
        if ((((Integer) attrs.get("mode")) & 0170000) != 0100000 || ((Integer) attrs.get("nlink")) != 1) {
            throw new IOException("refused: " + file + " is not a regular file with one link");
        }
        return attrs.get("fileKey");
    }

    private static void same(Object expected, Object seen) throws IOException {
        if (!expected.equals(seen)) {
            throw new IOException("the file was replaced while it was opened");
        }
    }

    /** An append whose open is confirmed by a look after it (the look before is the caller's). */
    private Object appendChecked(String line) throws IOException {
        try (FileChannel c = FileChannel.open(entry, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
                LinkOption.NOFOLLOW_LINKS)) {
            Object key = look(entry, true);
            c.write(ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8)));
            return key;
        }
    }

    /** A read of the queue (read-write, positional: never blocks on a FIFO), then a look: still the file seen before. */
    private String readQueueChecked(Object key) throws IOException {
        String text;
        try (FileChannel c = openForRead(entry)) {
            text = readAll(c);
        }
        same(key, look(entry, true));
        return text;
    }

    private static FileChannel openForRead(Path file) throws IOException {
        return FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
    }

    private String readAll(FileChannel c) throws IOException {
        readBuffer.clear();
        while (readBuffer.hasRemaining() && c.read(readBuffer, readBuffer.position()) > 0) {
            // small files
        }
        return new String(readBuffer.array(), 0, readBuffer.position(), StandardCharsets.UTF_8);
    }

    private void append(String line) throws IOException {
        try (FileChannel c = FileChannel.open(entry, StandardOpenOption.CREATE, StandardOpenOption.APPEND,
                LinkOption.NOFOLLOW_LINKS)) {
            c.write(ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8)));
        }
    }
}
