package dev.kanuki;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * A shared file that is only ever read and written under a lock, so that no update is lost
 * (a bulletin board, a counter, a state file). Each update is: lock, read, transform, write a temporary file,
 * fsync it, {@link LockHandle#verify() verify} the lock is still held, atomically rename it over
 * the file, fsync the directory, release. Readers never see a half-written file, and a holder
 * that lost its lock does not overwrite a newer holder's data.
 *
 * <p>There is deliberately no way to read the file through this class without the lock: reading
 * outside the lock would let a reader act on a value that is being replaced.
 */
public final class LockedFile {
    private final DistributedLock lock;
    private final Path file;

    private LockedFile(DistributedLock lock, Path file) {
        this.lock = Objects.requireNonNull(lock, "lock");
        this.file = Objects.requireNonNull(file, "file").toAbsolutePath();
        if (this.file.getParent() == null) {
            throw new IllegalArgumentException("file '" + file + "' has no parent directory");
        }
    }

    /**
     * @param lock the lock that guards the file; every writer of the file must use the same lock
     * @param file the file to guard; it need not exist yet
     * @return a guarded file
     */
    public static LockedFile of(DistributedLock lock, Path file) {
        return new LockedFile(lock, file);
    }

    /** @return the guarded file */
    public Path path() {
        return file;
    }

    /**
     * Updates the file under the lock.
     *
     * @param timeout the longest wait for the lock
     * @param transform receives the current content (empty when the file does not exist) and
     *     returns the new content; returning the very array it was given writes nothing
     * @return the content the file has after the update
     * @throws LockTimeoutException when the lock was not obtained in time; nothing was written
     * @throws LockLostException when the lock was lost before the rename; nothing was written
     * @throws LockBackendException when the file cannot be read or written; the file is unchanged
     */
    public byte[] update(Duration timeout, UnaryOperator<byte[]> transform) {
        try (LockHandle handle = lock.acquire(timeout)) {
            byte[] before = readContent();
            byte[] after = Objects.requireNonNull(transform.apply(before), "transform returned null");
            if (after != before) {
                replaceContent(after, handle);
            }
            return after;
        }
    }

    /**
     * {@link #update} for UTF-8 text.
     *
     * @param timeout the longest wait for the lock
     * @param transform receives the current text ("" when the file does not exist) and returns the new text
     * @return the text the file has after the update
     */
    public String updateText(Duration timeout, UnaryOperator<String> transform) {
        byte[] result = update(timeout, bytes -> {
            String before = new String(bytes, StandardCharsets.UTF_8);
            String after = transform.apply(before);
            return after.equals(before) ? bytes : after.getBytes(StandardCharsets.UTF_8);
        });
        return new String(result, StandardCharsets.UTF_8);
    }

    /**
     * Reads the file under the lock.
     *
     * @param timeout the longest wait for the lock
     * @param reader receives the content (empty when the file does not exist)
     * @param <R> what the reader returns
     * @return what the reader returned
     */
    public <R> R read(Duration timeout, Function<byte[], R> reader) {
        try (LockHandle ignored = lock.acquire(timeout)) {
            return reader.apply(readContent());
        }
    }

    private byte[] readContent() {
        try {
            return Files.readAllBytes(file);
        } catch (NoSuchFileException e) {
            return new byte[0];
        } catch (IOException e) {
            throw new LockBackendException("cannot read " + file + ": " + e, "check that the file is readable", e);
        }
    }

    private void replaceContent(byte[] content, LockHandle handle) {
        Path dir = file.getParent();
        Path temp = dir.resolve("." + file.getFileName() + "." + UUID.randomUUID() + ".tmp");
        try {
            try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer buffer = ByteBuffer.wrap(content);
                while (buffer.hasRemaining()) {
                    out.write(buffer);
                }
                out.force(true);
            }
            copyPermissions(temp);
            handle.verify();
            try {
                Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new LockBackendException("cannot rename " + temp + " over " + file + " atomically",
                        "keep the file on a local file system that supports rename", e);
            }
            forceDirectory(dir);
        } catch (IOException e) {
            throw new LockBackendException("cannot write " + file + ": " + e,
                    "check free space and permissions of " + dir + "; the file is unchanged", e);
        } finally {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException ignored) {
                // best effort: the temporary file has a unique name and harms nobody
            }
        }
    }

    private void copyPermissions(Path temp) throws IOException {
        PosixFileAttributeView view = Files.getFileAttributeView(file, PosixFileAttributeView.class);
        if (view == null || !Files.exists(file)) {
            return;
        }
        Set<PosixFilePermission> permissions = view.readAttributes().permissions();
        Files.setPosixFilePermissions(temp, permissions);
    }

    private static void forceDirectory(Path dir) {
        // Makes the rename itself durable; not every platform can open a directory for fsync.
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException ignored) {
            // the rename has happened; only its durability across a power cut is not assured
        }
    }
}
