package dev.kanuki;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;

/**
 * The versions of a {@link LockedFile}, ordered by fencing token by the file system itself, so
 * that a holder that lost its lock cannot replace a newer holder's content at whatever instant it
 * is paused.
 *
 * <p>A version is a file {@code after-P} in the directory {@code .NAME.kanuki} beside the file: its
 * first line names its own fencing token, the rest is the content; {@code P} is the token of the
 * version it replaced (its parent, 0 for the first). A version is committed by {@code link(2)} of
 * a fully written, fsynced temporary file to the name {@code after-P}: the kernel creates that
 * name at most once, so each version has at most one successor — a compare-and-swap on the
 * directory. A writer commits only on top of a parent whose token is below its own, so tokens rise
 * along the chain, and a stale holder either commits before any newer holder has written (which
 * fencing allows: the resource had seen no newer token yet) or finds its slot taken and is refused.
 * The current version (the head) is the entry with the largest {@code P}.
 */
final class FileVersions {
    private static final String PREFIX = "after-";
    private static final String HEADER = "kanuki-version ";
    private static final long STALE_TEMP_MILLIS = 10 * 60_000L;
    private final Path file;
    private final Path directory;

    /** One version: its fencing token, the slot it was committed in, and its content. */
    record Version(long token, long parent, byte[] content) {
    }

    FileVersions(Path file) {
        this.file = file;
        this.directory = file.resolveSibling("." + file.getFileName() + ".kanuki");
    }

    Path directory() {
        return directory;
    }

    /**
     * @return the current version; before the first versioned write, the plain file's content
     *     (or nothing) as token 0
     */
    Version head() throws IOException {
        long parent = headParent();
        if (parent < 0) {
            return new Version(0, -1, readPlain());
        }
        Path entry = directory.resolve(name(parent));
        byte[] raw;
        try {
            raw = Files.readAllBytes(entry);
        } catch (NoSuchFileException e) {
            return head(); // cleaned up under us: a newer head exists
        }
        return parse(raw, parent, entry);
    }

    private byte[] readPlain() throws IOException {
        try {
            return Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return new byte[0];
        }
    }

    /** @return the largest committed parent token, or -1 when there is no version yet */
    private long headParent() throws IOException {
        long best = -1;
        if (!Files.isDirectory(directory, LinkOption.NOFOLLOW_LINKS)) {
            return best;
        }
        for (long parent : parents()) {
            best = Math.max(best, parent);
        }
        return best;
    }

    private List<Long> parents() throws IOException {
        List<Long> out = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory, PREFIX + "*")) {
            for (Path entry : entries) {
                try {
                    out.add(Long.parseLong(entry.getFileName().toString().substring(PREFIX.length())));
                } catch (NumberFormatException e) {
                    // not ours
                }
            }
        } catch (NoSuchFileException e) {
            return out;
        }
        return out;
    }

    /** Writes a version of {@code content} with {@code token} to a temporary file, fsynced. */
    Path write(long token, byte[] content) throws IOException {
        Files.createDirectories(directory);
        Path temp = directory.resolve(".tmp-" + UUID.randomUUID());
        try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
            writeAll(out, ByteBuffer.wrap((HEADER + token + "\n").getBytes(StandardCharsets.US_ASCII)));
            writeAll(out, ByteBuffer.wrap(content));
            out.force(true);
        }
        return temp;
    }

    /**
     * Commits a written version on top of {@code parent}.
     *
     * @return true when it is now the head; false when another version was committed on top of
     *     {@code parent} first (the caller reads the head again)
     */
    boolean commit(Path temp, Version parent, long token) throws IOException {
        Path slot = directory.resolve(name(parent.token()));
        try {
            Files.createLink(slot, temp);
        } catch (FileAlreadyExistsException e) {
            return false;
        } finally {
            Files.deleteIfExists(temp);
        }
        // The slot was free: either nobody wrote on top of the parent, or its successor has been
        // cleaned up because the chain moved on far; then this is a dead branch, never the head.
        if (!leadsToHead(parent.token(), token)) {
            Files.deleteIfExists(slot);
            return false;
        }
        forceDirectory(directory);
        return true;
    }

    /**
     * @param slot the parent token naming a version's slot
     * @param token that version's own token
     * @return true when the head is that version or was built on it
     */
    boolean leadsToHead(long slot, long token) throws IOException {
        long head = headParent();
        long p = slot;
        long t = token;
        for (int step = 0; step < 10_000; step++) {
            if (p == head) {
                return true;
            }
            Path next = directory.resolve(name(t));
            byte[] raw;
            try {
                raw = Files.readAllBytes(next);
            } catch (NoSuchFileException e) {
                return false;
            }
            p = t;
            t = parse(raw, p, next).token();
        }
        return false;
    }

    /**
     * Removes versions older than the three newest once they are a minute old (a writer paused
     * just after committing can still find its version), and temporary files of writers long gone.
     */
    void cleanUp() throws IOException {
        List<Long> parents = parents();
        parents.sort(null);
        long now = System.currentTimeMillis();
        for (int i = 0; i < parents.size() - 3; i++) {
            Path old = directory.resolve(name(parents.get(i)));
            try {
                if (now - changedMillis(old) > 60_000) {
                    Files.deleteIfExists(old);
                }
            } catch (NoSuchFileException e) {
                // removed by another writer
            }
        }
        try (DirectoryStream<Path> temps = Files.newDirectoryStream(directory, ".tmp-*")) {
            for (Path temp : temps) {
                try {
                    FileTime modified = Files.getLastModifiedTime(temp, LinkOption.NOFOLLOW_LINKS);
                    if (now - modified.toMillis() > STALE_TEMP_MILLIS) {
                        Files.deleteIfExists(temp);
                    }
                } catch (NoSuchFileException e) {
                    // its writer finished
                }
            }
        }
    }

    /** @return the entry's ctime (a link or rename changes it; writing a file's data before does not count) */
    private static long changedMillis(Path path) throws IOException {
        try {
            return ((FileTime) Files.getAttribute(path, "unix:ctime", LinkOption.NOFOLLOW_LINKS)).toMillis();
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            return Files.getLastModifiedTime(path, LinkOption.NOFOLLOW_LINKS).toMillis();
        }
    }

    private static String name(long parent) {
        return PREFIX + String.format("%019d", parent);
    }

    private static Version parse(byte[] raw, long parent, Path entry) throws IOException {
        int newline = -1;
        for (int i = 0; i < Math.min(raw.length, 64); i++) {
            if (raw[i] == '\n') {
                newline = i;
                break;
            }
        }
        String header = newline < 0 ? "" : new String(raw, 0, newline, StandardCharsets.US_ASCII);
        if (!header.startsWith(HEADER)) {
            throw new IOException(entry + " is not a kanuki version file (it was changed by something else)");
        }
        long token;
        try {
            token = Long.parseLong(header.substring(HEADER.length()));
        } catch (NumberFormatException e) {
            throw new IOException(entry + " has a damaged header: " + header);
        }
        return new Version(token, parent, Arrays.copyOfRange(raw, newline + 1, raw.length));
    }

    static void writeAll(FileChannel out, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            out.write(buffer);
        }
    }

    static void forceDirectory(Path dir) {
        // Makes renames and links durable; not every platform can open a directory for fsync.
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException ignored) {
            // the change has happened; only its durability across a power cut is not assured
        }
    }
}
