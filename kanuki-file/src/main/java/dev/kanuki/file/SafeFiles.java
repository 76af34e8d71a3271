package dev.kanuki.file;

import dev.kanuki.LockBackendException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * Opens kanuki's own small files in a lock directory someone may have tampered with, so that no
 * call can block or write through a link:
 *
 * <ul>
 *   <li>the path is looked at first ({@code lstat}): a symbolic link, directory, FIFO, socket or
 *       device is refused at once, naming the path and what was found;</li>
 *   <li>a file about to be written is refused when it has more than one hard link (a victim
 *       planted by {@code ln}); files kanuki replaces are written to a new name and renamed;</li>
 *   <li>it is opened read-write (on Linux, opening a FIFO read-write never blocks; a socket
 *       fails at once) and never following links, then looked at again: if the path no longer
 *       names the same regular file, the channel is closed and the call fails (or looks again).
 *       A file about to be written is looked at right after opening, before any write; a file
 *       only read ({@link #readRegular}) once, after reading, and the content is discarded when
 *       the path changed;</li>
 *   <li>one {@code lstat} tells the kind, the identity and the link count
 *       ({@link #lookWithLinks}); a look the caller made a moment ago at the same path may stand
 *       for the look before an open (the look after it covers the longer window);</li>
 *   <li>reads and writes are positional ({@code pread}/{@code pwrite}), which fail at once on a
 *       FIFO instead of waiting for a writer.</li>
 * </ul>
 */
final class SafeFiles {
    private SafeFiles() {
    }

    /** {@return what is at the path, without following links, or null when nothing is} */
    static BasicFileAttributes look(Path path) throws IOException {
        try {
            return Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /** {@return "a FIFO", "a socket", "a directory"... for messages} */
    static String kind(Path path, BasicFileAttributes attrs) {
        if (attrs.isSymbolicLink()) {
            return "a symbolic link";
        }
        if (attrs.isDirectory()) {
            return "a directory";
        }
        if (attrs.isRegularFile()) {
            return "a regular file";
        }
        try {
            int type = ((Integer) Files.getAttribute(path, "unix:mode", LinkOption.NOFOLLOW_LINKS)) & 0170000;
            return switch (type) {
                case 0010000 -> "a FIFO (named pipe)";
                case 0140000 -> "a socket";
                case 0020000 -> "a character device";
                case 0060000 -> "a block device";
                default -> "a special file";
            };
        } catch (IOException | RuntimeException e) {
            return "a special file";
        }
    }

    /** {@return the number of hard links of the file at the path (1 where it cannot be told; 0 when it is gone)} */
    static int links(Path path) throws IOException {
        try {
            return (Integer) Files.getAttribute(path, "unix:nlink", LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return 0;
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            return 1;
        }
    }

    /** Refuses (with {@link #refused}) what is there when it is not a regular file; null (nothing there) passes. */
    static void requireRegular(String what, Path path, BasicFileAttributes attrs) {
        if (attrs != null && !attrs.isRegularFile()) {
            throw refused(what, path, kind(path, attrs));
        }
    }

    static LockBackendException refused(String what, Path path, String found) {
        return new LockBackendException(what + " " + path + " is " + found
                + "; kanuki never follows, writes through or deletes such entries",
                "if you did not create it, inspect it and remove it by hand", null);
    }

    static LockBackendException linked(String what, Path path, int links) {
        return new LockBackendException(what + " " + path + " has " + links
                + " hard links; kanuki never writes through a link (another name of the same file would change too)",
                "if you did not create the other link, inspect it and remove " + path + " by hand", null);
    }

    /**
     * The attributes the checks need (kind, identity, size) and the hard-link count, from one
     * {@code lstat}: reading {@link BasicFileAttributes} and then {@code unix:nlink} would be two
     * system calls, and the checks run around every open.
     */
    private static final String CHECKED_ATTRIBUTES = "unix:mode,nlink,size,fileKey";

    /** What one {@code lstat} told: the entry's attributes and its hard links (1 where they cannot be told). */
    record Seen(BasicFileAttributes attrs, int links) {
    }

    /** {@return what is at the path with its link count, without following links, from one call; null when nothing is} */
    static Seen lookWithLinks(Path path) throws IOException {
        try {
            java.util.Map<String, Object> map = Files.readAttributes(path, CHECKED_ATTRIBUTES, LinkOption.NOFOLLOW_LINKS);
            return new Seen(new ModeAttributes(path, ((Number) map.get("mode")).intValue(),
                    ((Number) map.get("size")).longValue(), map.get("fileKey")), ((Number) map.get("nlink")).intValue());
        } catch (NoSuchFileException e) {
            return null;
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            BasicFileAttributes attrs = look(path); // not a Unix file system: no link count to read
            return attrs == null ? null : new Seen(attrs, 1);
        }
    }

    /**
     * {@link BasicFileAttributes} from the file mode {@link #lookWithLinks} read. The checks never
     * use the times; asking for one reads them (another {@code lstat}).
     */
    private record ModeAttributes(Path path, int mode, long size, Object fileKey) implements BasicFileAttributes {
        private java.nio.file.attribute.FileTime time(String name) {
            try {
                return (java.nio.file.attribute.FileTime) Files.getAttribute(path, name, LinkOption.NOFOLLOW_LINKS);
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        }

        @Override
        public java.nio.file.attribute.FileTime lastModifiedTime() {
            return time("lastModifiedTime");
        }

        @Override
        public java.nio.file.attribute.FileTime lastAccessTime() {
            return time("lastAccessTime");
        }

        @Override
        public java.nio.file.attribute.FileTime creationTime() {
            return time("creationTime");
        }

        @Override
        public boolean isRegularFile() {
            return (mode & 0170000) == 0100000;
        }

        @Override
        public boolean isDirectory() {
            return (mode & 0170000) == 0040000;
        }

        @Override
        public boolean isSymbolicLink() {
            return (mode & 0170000) == 0120000;
        }

        @Override
        public boolean isOther() {
            return !isRegularFile() && !isDirectory() && !isSymbolicLink();
        }
    }

    /**
     * Checks that the path is a regular file that may be used.
     *
     * @param forWrite also require a single hard link
     * @return its attributes, or null when nothing is there
     */
    static BasicFileAttributes checkRegular(String what, Path path, boolean forWrite) throws IOException {
        if (!forWrite) {
            BasicFileAttributes attrs = look(path);
            requireRegular(what, path, attrs);
            return attrs;
        }
        Seen seen = lookWithLinks(path);
        if (seen == null) {
            return null;
        }
        requireRegular(what, path, seen.attrs());
        if (seen.links() == 0) {
            return null; // removed just now
        }
        if (seen.links() > 1) {
            throw linked(what, path, seen.links());
        }
        return seen.attrs();
    }

    /**
     * Opens an existing regular file read-write, with every check above.
     *
     * @param what how messages call the file ("queue file")
     * @param forWrite whether it will be written (a second hard link is then refused)
     * @throws NoSuchFileException when nothing is at the path
     */
    static FileChannel openExisting(String what, Path path, boolean forWrite) throws IOException {
        return openExistingWithKey(what, path, forWrite).channel();
    }

    /**
     * An opened file and its identity (the path named that file before and after the open).
     *
     * @param seen the look made after opening a file for writing (null otherwise): the caller
     *     may pass it on as the look before its next open of the same path
     */
    record Opened(FileChannel channel, Object fileKey, Seen seen) {
    }

    /**
     * A look the caller made a moment ago at the same path, used as the look before an open
     * instead of making another: the checks are the same (this regular file, one link when it
     * will be written, the same file after opening), and the time between the look and the open
     * is a few system calls longer, which the check after opening covers as it covers any race.
     *
     * @return the attributes to expect, or null when the look must be made (none given, or it showed
     *     something the open would refuse: looked at again, to fail with the right message)
     */
    private static BasicFileAttributes fresh(Seen known, boolean forWrite) {
        if (known == null || !known.attrs().isRegularFile() || (forWrite && known.links() != 1)) {
            return null;
        }
        return known.attrs();
    }

    /** {@link #openExisting}, also telling which file was opened. */
    static Opened openExistingWithKey(String what, Path path, boolean forWrite) throws IOException {
        return openExistingWithKey(what, path, forWrite, null);
    }

    /**
     * {@link #openExistingWithKey(String, Path, boolean)} after a look the caller just made.
     *
     * @param known a look at the path made a moment ago (see {@link #fresh}), or null
     */
    static Opened openExistingWithKey(String what, Path path, boolean forWrite, Seen known) throws IOException {
        for (int round = 0; ; round++) {
            try {
                return openExistingOnce(what, path, forWrite, round == 0 ? fresh(known, forWrite) : null);
            } catch (Replaced e) {
                if (round >= 1000) {
                    throw e.failure;
                }
            }
        }
    }

    private static Opened openExistingOnce(String what, Path path, boolean forWrite, BasicFileAttributes known)
            throws IOException {
        BasicFileAttributes before = known != null ? known : checkRegular(what, path, forWrite);
        if (before == null) {
            throw new NoSuchFileException(path.toString());
        }
        FileChannel channel;
        try {
            channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        } catch (AccessDeniedException e) {
            if (forWrite) {
                throw e;
            }
            // A file of another user we may only read: the look above showed a regular file.
            channel = FileChannel.open(path, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
        }
        return confirmOpened(what, path, channel, before.fileKey(), forWrite, false);
    }

    /**
     * Opens (creating when absent) a regular file for appending or writing, with every check.
     *
     * @return the channel and the identity of the file it is open on
     */
    static Opened openOrCreate(String what, Path path, boolean append) throws IOException {
        return openOrCreate(what, path, append, null);
    }

    /**
     * {@link #openOrCreate(String, Path, boolean)} after a look the caller just made.
     *
     * @param known a look at the path made a moment ago (see {@link #fresh}), or null
     */
    static Opened openOrCreate(String what, Path path, boolean append, Seen known) throws IOException {
        for (int round = 0; ; round++) {
            try {
                return openOrCreateOnce(what, path, append, round == 0 ? fresh(known, true) : null);
            } catch (Replaced e) {
                if (round >= 1000) {
                    throw e.failure;
                }
            }
        }
    }

    private static Opened openOrCreateOnce(String what, Path path, boolean append, BasicFileAttributes known)
            throws IOException {
        BasicFileAttributes before = known != null ? known : checkRegular(what, path, true);
        FileChannel channel = append
                ? FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND,
                        LinkOption.NOFOLLOW_LINKS)
                : FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE,
                        LinkOption.NOFOLLOW_LINKS);
        return confirmOpened(what, path, channel, before == null ? null : before.fileKey(), true, true);
    }

    /**
     * The check after opening: the path still names a regular file, the same one seen before
     * (when one was), with one link when it will be written. Closes the channel when not.
     *
     * @return the channel and the identity of the file at the path (that of the file opened)
     */
    static Opened confirmOpened(String what, Path path, FileChannel channel, Object expectedKey, boolean forWrite,
                                     boolean creating) throws IOException {
        try {
            Seen seen = forWrite ? lookWithLinks(path) : null;
            BasicFileAttributes after = forWrite ? (seen == null ? null : seen.attrs()) : look(path);
            if (after == null) {
                if (creating) {
                    throw new Replaced(new LockBackendException(what + " " + path + " keeps being removed while it is"
                            + " being opened", "something else is removing files in the lock directory; stop it", null));
                }
                throw new NoSuchFileException(path.toString());
            }
            requireRegular(what, path, after);
            if (expectedKey != null && !expectedKey.equals(after.fileKey())) {
                // Replaced between the look and the open (a queue compaction does that): look again.
                throw new Replaced(new LockBackendException(what + " " + path + " keeps being replaced while it is"
                        + " being opened", "something else is creating or removing files in the lock directory; stop it", null));
            }
            if (forWrite) {
                int links = seen.links();
                if (links == 0) {
                    if (creating) {
                        throw new Replaced(new LockBackendException(what + " " + path + " keeps being removed while it"
                                + " is being opened", "something else is removing files in the lock directory; stop it", null));
                    }
                    throw new NoSuchFileException(path.toString());
                }
                if (links > 1) {
                    throw linked(what, path, links);
                }
            }
            return new Opened(channel, after.fileKey(), seen);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** The path named another file after opening than before: the caller looks again. */
    private static final class Replaced extends IOException {
        final LockBackendException failure;

        Replaced(LockBackendException failure) {
            super(failure.getMessage());
            this.failure = failure;
        }
    }

    /** The content of a small file read by {@link #readRegular}, and the identity of the file it came from. */
    record Content(ByteBuffer data, Object fileKey, boolean cut, Seen seen) {
    }

    /**
     * Reads a small regular file whole, never following a link and never blocking: one look
     * before opening (refuses anything but a regular file, and a FIFO or device is never opened),
     * a read-write open (which never blocks on Linux, even on a FIFO swapped in meanwhile), positional reads
     * (which fail at once on a FIFO), then one look after reading that must show the same
     * regular file. That second look is the identity check of the open and the identity of the
     * content at once: if the path was swapped between the first look and the open, what was
     * read is discarded and the read is made again (reading another file does it no harm;
     * nothing is written here).
     *
     * @param initial the size to read first (the buffer grows when the file is larger)
     * @param max the most bytes read; {@link Content#cut()} tells when the file holds more
     * @return the content, or null when nothing is at the path (or it was removed while being read)
     */
    static Content readRegular(String what, Path path, int initial, int max) throws IOException {
        return readRegular(what, path, initial, max, null);
    }

    /**
     * {@link #readRegular(String, Path, int, int)} after a look the caller just made.
     *
     * @param known a look at the path made a moment ago (see {@link #fresh}), or null
     * @return as there; {@link Content#seen()} is the look made after reading (with the link
     *     count), for the caller's next open of the path
     */
    static Content readRegular(String what, Path path, int initial, int max, Seen known) throws IOException {
        for (int round = 0; ; round++) {
            BasicFileAttributes given = round == 0 ? fresh(known, false) : null;
            BasicFileAttributes before = given != null ? given : checkRegular(what, path, false);
            if (before == null) {
                return null;
            }
            FileChannel opened;
            try {
                opened = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
            } catch (NoSuchFileException e) {
                return null;
            } catch (AccessDeniedException e) {
                try {
                    // A file of another user we may only read: the look above showed a regular file.
                    opened = FileChannel.open(path, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS);
                } catch (NoSuchFileException gone) {
                    return null;
                }
            }
            ByteBuffer buffer;
            boolean cut;
            try (FileChannel channel = opened) {
                buffer = ByteBuffer.allocate(Math.max(1, Math.min(initial, max)));
                while (true) {
                    int n = channel.read(buffer, buffer.position());
                    if (n < 0) {
                        break;
                    }
                    if (!buffer.hasRemaining()) {
                        if (buffer.capacity() >= max) {
                            break;
                        }
                        ByteBuffer larger = ByteBuffer.allocate((int) Math.min(max, 2L * buffer.capacity()));
                        buffer.flip();
                        larger.put(buffer);
                        buffer = larger;
                    }
                }
                cut = !buffer.hasRemaining() && channel.read(ByteBuffer.allocate(1), buffer.position()) > 0;
            } catch (IOException e) {
                // A FIFO or device swapped in between the look and the open: name it, as the look would have.
                BasicFileAttributes now = look(path);
                requireRegular(what, path, now);
                throw e;
            }
            Seen seen = lookWithLinks(path);
            if (seen == null) {
                return null; // removed while we read it
            }
            BasicFileAttributes after = seen.attrs();
            requireRegular(what, path, after);
            if (java.util.Objects.equals(after.fileKey(), before.fileKey())) { // both null: no identity to tell
                buffer.flip();
                return new Content(buffer, after.fileKey(), cut, seen);
            }
            if (round >= 1000) {
                throw new LockBackendException(what + " " + path + " keeps being replaced while it is being read",
                        "something else is creating or removing files in the lock directory; stop it", null);
            }
        }
    }

    /** Reads up to {@code max} bytes from the start with positional reads (never blocks on a FIFO). */
    static ByteBuffer readFrom(FileChannel channel, int max) throws IOException {
        ByteBuffer buffer = ByteBuffer.allocate(max);
        while (buffer.hasRemaining()) {
            int n = channel.read(buffer, buffer.position());
            if (n <= 0) {
                break;
            }
        }
        buffer.flip();
        return buffer;
    }
}
