package dev.kanuki.bench;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * kanuki-file's {@code os} strategy by hand, for {@link FileInterleaved}: one lock file, its
 * channel opened once and kept (as a careful raw user would, and as kanuki keeps the file of a
 * name in use), and per acquisition exactly what kanuki must do for its guarantees:
 *
 * <ol>
 *   <li>{@code fcntl} lock ({@code FileChannel.tryLock});</li>
 *   <li>the identity check: {@code lstat} of the path, its file key compared with the one the
 *       channel was opened on (without it a lock on a file someone removed protects nothing);</li>
 *   <li>the 128-byte owner/fencing record read and written back with the next token
 *       ({@link OwnerRecordByHand}: one {@code pread}, one {@code pwrite});</li>
 *   <li>{@code fcntl} unlock.</li>
 * </ol>
 *
 * {@link #bare()} is the lock and unlock alone, for context. Single-threaded.
 */
final class OsByHand implements AutoCloseable {
    private final Path path;
    private final FileChannel channel;
    private final Object fileKey;
    private final OwnerRecordByHand record = new OwnerRecordByHand();
    private long lastToken;

    OsByHand(Path path) throws IOException {
        this.path = path;
        this.channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
        this.fileKey = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
    }

    /** Lock, identity check, record, unlock. @return the fencing token */
    long sameWork() throws IOException {
        FileLock lock = channel.tryLock();
        if (lock == null) {
            throw new IOException(path + " is locked by someone else");
        }
        try {
            BasicFileAttributes now = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!now.isRegularFile() || !fileKey.equals(now.fileKey())) {
                throw new IOException(path + " was removed or replaced");
            }
            lastToken = record.stamp(channel);
            return lastToken;
        } finally {
            lock.release();
        }
    }

    /** Lock and unlock only. */
    void bare() throws IOException {
        FileLock lock = channel.tryLock();
        if (lock == null) {
            throw new IOException(path + " is locked by someone else");
        }
        lock.release();
    }

    /** @return the last token {@link #sameWork()} wrote */
    long lastToken() {
        return lastToken;
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
