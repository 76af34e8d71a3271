package dev.kanuki.file;

import dev.kanuki.file.EntryStrategy.Observed;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;

/** File operations the ttl strategies share; none of them follows a symbolic link. */
final class EntryFiles {
    private EntryFiles() {
    }

    /** {@return the attributes of the entry itself (not a link's target), or null when absent} */
    static BasicFileAttributes attributes(Path path) throws IOException {
        try {
            return Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /**
     * @return milliseconds since the entry last changed (its ctime: creation, rename, or record
     *     rewrite), the age the stale rules use when the record cannot be read; 0 when the entry
     *     vanished meanwhile (another process released or removed it: it is not stale, and a
     *     caller that looked a moment ago must not fail on the race)
     */
    static long ageMillis(Path path) throws IOException {
        try {
            return ageOf(path);
        } catch (NoSuchFileException e) {
            return 0;
        }
    }

    private static long ageOf(Path path) throws IOException {
        try {
            FileTime ctime = (FileTime) Files.getAttribute(path, "unix:ctime", LinkOption.NOFOLLOW_LINKS);
            return System.currentTimeMillis() - ctime.toMillis();
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            BasicFileAttributes attrs = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return System.currentTimeMillis() - attrs.lastModifiedTime().toMillis();
        }
    }

    static Observed foreign(Path path, BasicFileAttributes attrs, String expected) {
        String what = SafeFiles.kind(path, attrs);
        return new Observed(Observed.State.FOREIGN, null, what + " where " + expected + " was expected", 0);
    }

    static Observed observe(String text, Path path) throws IOException {
        TtlRecord.Read read = TtlRecord.decode(text);
        try {
            return switch (read.kind()) {
                case VALID -> new Observed(Observed.State.VALID, read.record(), null, 0);
                case FREE_MARK -> new Observed(Observed.State.FREE, null, null, ageMillis(path));
                case CORRUPTED -> new Observed(Observed.State.CORRUPTED, null, read.problem(), ageMillis(path));
            };
        } catch (NoSuchFileException e) {
            return Observed.ABSENT; // released or broken between reading it and looking at its age
        }
    }

    /**
     * Reads a small regular file without following links and without blocking (see
     * {@link SafeFiles}); null when it is gone.
     *
     * @throws dev.kanuki.LockBackendException when something other than a regular file is there
     */
    static String readText(Path path) throws IOException {
        SafeFiles.Content content = SafeFiles.readRegular("lock file", path, 512, 8192); // a record is about 100 bytes
        return content == null ? null
                : new String(content.data().array(), 0, content.data().limit(), StandardCharsets.UTF_8);
    }

    /** Writes a record into a file just created empty ({@code CREATE_NEW}): nothing after it to trim. */
    static void writeNew(FileChannel channel, String text) throws IOException {
        ByteBuffer data = ByteBuffer.wrap((text + "\n").getBytes(StandardCharsets.UTF_8));
        while (data.hasRemaining()) {
            channel.write(data, data.position());
        }
    }

    /** Writes a file next to {@code target} and renames it over {@code target}: all or nothing. */
    static void replaceAtomically(Path target, String text, String uniqueSuffix) throws IOException {
        Path temp = target.resolveSibling(target.getFileName() + ".tmp." + uniqueSuffix);
        try {
            try (FileChannel channel = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS)) {
                writeNew(channel, text);
            }
            Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(temp);
        }
    }
}
