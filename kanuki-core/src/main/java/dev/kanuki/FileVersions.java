package dev.kanuki;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.io.InputStream;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
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
 *
 * <p>Whoever can write the version directory decides the content every holder reads and can
 * block every update with a high token, so the directory and each version read must be a real
 * directory and regular files (no link is followed) owned by this user or root and writable by
 * no one else; anything else is refused with a {@link LockBackendException} naming the directory
 * and the fix. kanuki makes the directory with mode 0700. The plain file is read only when it is
 * a regular file (never through a link, never a FIFO).
 */
final class FileVersions {
    private static final String PREFIX = "after-";
    private static final String HEADER = "kanuki-version ";
    /** The header line is at most this long, newline included. */
    private static final int HEADER_MAX = 64;
    private static final long STALE_TEMP_MILLIS = 10 * 60_000L;
    private final Path file;
    private final Path directory;

    /**
     * One version: its fencing token, the slot it was committed in, and its content, read from an
     * open file (the version may be cleaned up or the plain file replaced while it is read; the
     * open file still has the content). Never more than a buffer of it is in memory.
     */
    static final class Version implements Closeable {
        private final long token;
        private final long parent;
        /** The open version or plain file; null when there is no content (no file yet). */
        private final FileChannel channel;
        /** Where the content starts in {@link #channel} (after a version's header line). */
        private final long start;

        Version(long token, long parent, FileChannel channel, long start) {
            this.token = token;
            this.parent = parent;
            this.channel = channel;
            this.start = start;
        }

        long token() {
            return token;
        }

        long parent() {
            return parent;
        }

        /** {@return a new stream of the whole content; closing it leaves the version open} */
        InputStream content() {
            return channel == null ? InputStream.nullInputStream() : new PositionalInput(channel, start);
        }

        /** Copies the whole content to {@code out} (by the kernel where it can). */
        void copyTo(FileChannel out) throws IOException {
            if (channel == null) {
                return;
            }
            long size = channel.size();
            long position = start;
            while (position < size) {
                long copied = channel.transferTo(position, size - position, out);
                if (copied <= 0) {
                    try (InputStream in = new PositionalInput(channel, position)) {
                        in.transferTo(Channels.newOutputStream(out));
                    }
                    return;
                }
                position += copied;
            }
        }

        @Override
        public void close() throws IOException {
            if (channel != null) {
                channel.close();
            }
        }
    }

    /** Reads a channel from a position on without moving the channel's own position. */
    private static final class PositionalInput extends InputStream {
        private final FileChannel channel;
        private long position;

        PositionalInput(FileChannel channel, long position) {
            this.channel = channel;
            this.position = position;
        }

        @Override
        public int read() throws IOException {
            byte[] one = new byte[1];
            int n = read(one, 0, 1);
            return n < 0 ? -1 : one[0] & 0xff;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (len == 0) {
                return 0;
            }
            int n = channel.read(ByteBuffer.wrap(b, off, len), position);
            if (n > 0) {
                position += n;
            }
            return n;
        }
    }

    FileVersions(Path file) {
        this.file = file;
        this.directory = file.resolveSibling("." + file.getFileName() + ".kanuki");
    }

    Path directory() {
        return directory;
    }

    private static final int CURRENT_UID = currentUid();
    private static final int TYPE = 0170000;
    private static final int REGULAR = 0100000;
    private static final int DIRECTORY = 0040000;

    /**
     * Checks the version directory (see the class comment).
     *
     * @return false when it does not exist yet
     * @throws LockBackendException when it is not a directory, or another user owns or can write it
     */
    private boolean checkDirectory() throws IOException {
        Map<String, Object> a = attributes(directory);
        if (a == null) {
            return false;
        }
        int mode = ((Number) a.get("mode")).intValue();
        if ((mode & TYPE) != DIRECTORY) {
            throw foreign(directory + " is not a directory (a link or file was put in its place)");
        }
        checkOwned(directory, a, "version directory");
        return true;
    }

    private void checkOwned(Path path, Map<String, Object> a, String what) {
        if (!a.containsKey("owner")) {
            return; // not a Unix file system: no owners to check
        }
        int uid = ((Number) a.get("uid")).intValue();
        int mode = ((Number) a.get("mode")).intValue();
        String ownerName = ((UserPrincipal) a.get("owner")).getName();
        if (uid != 0 && uid != CURRENT_UID && !ownerName.equals(System.getProperty("user.name"))) {
            throw foreign("the " + what + " " + path + " belongs to " + ownerName
                    + ", not to " + System.getProperty("user.name") + " or root");
        }
        boolean privateGroup = a.get("group") instanceof GroupPrincipal g && g.getName().equals(ownerName);
        if ((mode & 0002) != 0 || ((mode & 0020) != 0 && !privateGroup)) { // a user-private group (umask 002) is the user's
            throw foreign("the " + what + " " + path + " is writable by other users (mode "
                    + String.format("%04o", mode & 07777) + ")");
        }
    }

    private LockBackendException foreign(String what) {
        return new LockBackendException("cannot use the versions of " + file + ": " + what + "; whoever can write them"
                + " decides the content every holder reads and can block every update",
                "if you did not make it, inspect it and remove it (rm -r " + directory + "); kanuki makes it again,"
                        + " yours with mode 0700, from the plain file " + file.getFileName(), null);
    }

    /** {@return the entry's owner, uid and mode without following a link, or null when absent} */
    private static Map<String, Object> attributes(Path path) throws IOException {
        try {
            return Files.readAttributes(path, "unix:uid,mode,owner,group", LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            return Map.of("uid", 0, "mode", Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS) ? DIRECTORY | 0700
                    : Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS) ? REGULAR | 0600 : 0); // not Unix: no owners
        }
    }

    /** {@return a version opened for reading, after checking it is a regular file of ours} */
    private FileChannel openEntry(Path entry) throws IOException {
        Map<String, Object> a = attributes(entry);
        if (a == null) {
            throw new NoSuchFileException(entry.toString());
        }
        if ((((Number) a.get("mode")).intValue() & TYPE) != REGULAR) {
            throw foreign(entry + " is not a regular file");
        }
        checkOwned(entry, a, "version");
        return FileChannel.open(entry, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
    }

    /** {@return the version at {@code entry}, open, its header read} */
    private Version openVersion(Path entry, long parent) throws IOException {
        FileChannel channel = openEntry(entry);
        try {
            ByteBuffer head = ByteBuffer.allocate(HEADER_MAX);
            while (head.hasRemaining() && channel.read(head, head.position()) > 0) {
                // a short read is possible; read until the buffer is full or the file ends
            }
            byte[] raw = Arrays.copyOf(head.array(), head.position());
            int newline = headerEnd(raw);
            long token = parseToken(raw, newline, parent, entry);
            return new Version(token, parent, channel, newline + 1L);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** {@return the token of the version at {@code entry}, read from its header only} */
    private long tokenOf(Path entry, long parent) throws IOException {
        try (Version v = openVersion(entry, parent)) {
            return v.token();
        }
    }

    private FileAttribute<?>[] ownerOnly(String mode) throws IOException {
        if (!Files.getFileStore(file.getParent()).supportsFileAttributeView(PosixFileAttributeView.class)) {
            return new FileAttribute<?>[0];
        }
        return new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString(mode))};
    }

    /** {@return this process's user id (the owner of {@code /proc/self}), or -1 where it cannot be told} */
    private static int currentUid() {
        try {
            return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * @return the current version; before the first versioned write, the plain file's content
     *     (or nothing) as token 0
     */
    Version head() throws IOException {
        long parent = headParent();
        if (parent < 0) {
            return new Version(0, -1, readPlain(), 0);
        }
        Path entry = directory.resolve(name(parent));
        try {
            return openVersion(entry, parent);
        } catch (NoSuchFileException e) {
            return head(); // cleaned up under us: a newer head exists
        }
    }

    /** {@return the plain file opened for reading, or null when it does not exist} */
    private FileChannel readPlain() throws IOException {
        Map<String, Object> a = attributes(file);
        if (a == null) {
            return null;
        }
        if ((((Number) a.get("mode")).intValue() & TYPE) != REGULAR) {
            // Never read through a link (it may lead to another user's file) nor open a FIFO (it blocks).
            throw new LockBackendException(file + " is not a regular file (a symbolic link, FIFO or other special file);"
                    + " a LockedFile reads and replaces only regular files",
                    "if you did not put it there, inspect it and remove it", null);
        }
        try {
            return FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /** {@return the largest committed parent token, or -1 when there is no version yet} */
    private long headParent() throws IOException {
        long best = -1;
        if (!checkDirectory()) {
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
                    long parent = Long.parseLong(entry.getFileName().toString().substring(PREFIX.length()));
                    if (parent >= 0 && entry.getFileName().toString().equals(name(parent))) {
                        out.add(parent);
                    }
                } catch (NumberFormatException e) {
                    // not ours
                }
            }
        } catch (NoSuchFileException e) {
            return out;
        }
        return out;
    }

    /**
     * Starts a version with {@code token}: a temporary file holding its header line, for the
     * caller to append the content to, fsync, and {@link #commit} (or delete).
     */
    Path begin(long token) throws IOException {
        try {
            Files.createDirectory(directory, ownerOnly("rwx------"));
        } catch (FileAlreadyExistsException e) {
            // made before (checked below)
        }
        checkDirectory();
        Path temp = directory.resolve(".tmp-" + UUID.randomUUID());
        // Mode 0600 whatever the umask: a version others could write would be refused when read.
        try (FileChannel out = FileChannel.open(temp, java.util.Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS), ownerOnly("rw-------"))) {
            writeAll(out, ByteBuffer.wrap((HEADER + token + "\n").getBytes(StandardCharsets.US_ASCII)));
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
            long nextToken;
            try {
                nextToken = tokenOf(next, t);
            } catch (NoSuchFileException e) {
                return false;
            }
            p = t;
            t = nextToken;
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

    /** {@return the entry's ctime (a link or rename changes it; writing a file's data before does not count)} */
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

    private static int headerEnd(byte[] raw) {
        for (int i = 0; i < Math.min(raw.length, HEADER_MAX); i++) {
            if (raw[i] == '\n') {
                return i;
            }
        }
        return -1;
    }

    private static long parseToken(byte[] raw, int newline, long parent, Path entry) throws IOException {
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
        if (token <= parent) {
            // Tokens rise along the chain: a version at or below its parent was not committed by kanuki.
            throw new IOException(entry + " has token " + token + ", not above the version it replaced (" + parent
                    + "): it was changed by something else");
        }
        return token;
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
