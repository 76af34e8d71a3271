package dev.kanuki;

import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.channels.Channels;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
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
 * (a bulletin board, a counter, a state file), and that a holder which lost its lock cannot
 * overwrite, whatever instant it was paused at.
 *
 * <p>Checking the lock and then writing is not enough: a holder paused (a GC, SIGSTOP) between the
 * check and the write resumes after another holder's update and overwrites it. So the file system
 * itself orders the writes by fencing token: each update is written in full (fsynced) as a new
 * version in the directory {@code .NAME.kanuki} beside the file and committed by creating the
 * version's name with {@code link(2)}, which succeeds at most once per parent version; a version
 * is committed only on top of one with a lower token. A holder that lost its lock either commits
 * before any newer holder has written (nothing newer exists to overwrite) or is refused with a
 * {@link LockLostException}. Later holders read the newest version, never the plain file.
 *
 * <p>The plain file at {@link #path()} is then replaced by a complete copy (temporary file, fsync,
 * atomic rename), so that readers who open it see whole content. A writer publishes only while its
 * version is the newest, and after renaming it checks again and republishes the newest if a newer
 * version appeared; only a writer paused exactly between those two steps can leave the plain file
 * one version behind until it resumes or the next update. Programs that need the newest content
 * read through {@link #read}.
 *
 * <p>{@link #updateStream} and {@link #readStream} work on streams, so that memory use does not
 * depend on the file's size; {@link #update}, {@link #updateText} and {@link #read} hold the whole
 * content in memory.
 *
 * <p>There is deliberately no way to read the file through this class without the lock: reading
 * outside the lock would let a reader act on a value that is being replaced. Every writer of the
 * file must go through this class with the same lock; changes made to the plain file by other
 * programs after the first update are not seen.
 */
public final class LockedFile {
    private static final int BUFFER = 64 * 1024;
    private final DistributedLock lock;
    private final Path file;
    private final FileVersions versions;

    private LockedFile(DistributedLock lock, Path file) {
        this.lock = Objects.requireNonNull(lock, "lock");
        this.file = Objects.requireNonNull(file, "file").toAbsolutePath();
        if (this.file.getParent() == null) {
            throw new IllegalArgumentException("file '" + file + "' has no parent directory");
        }
        this.versions = new FileVersions(this.file);
    }

    /**
     * Guards a file with a lock.
     *
     * @param lock the lock that guards the file; every writer of the file must use the same lock
     * @param file the file to guard; it need not exist yet
     * @return a guarded file
     */
    public static LockedFile of(DistributedLock lock, Path file) {
        return new LockedFile(lock, file);
    }

    /** {@return the guarded file} */
    public Path path() {
        return file;
    }

    /**
     * Writes the new content of a {@link LockedFile} from the current one, as streams, so that
     * files of any size are updated in a buffer's worth of memory.
     */
    @FunctionalInterface
    public interface ContentUpdate {
        /**
         * Writes the new content.
         *
         * @param current the current content (empty when the file does not exist); closing it is
         *     optional
         * @param next where to write the whole new content; closing it is optional
         * @return true to commit what was written to {@code next}; false to leave the file unchanged
         * @throws IOException when reading, writing or the caller's own work fails; nothing is written
         */
        boolean update(InputStream current, OutputStream next) throws IOException;
    }

    /**
     * Reads the content of a {@link LockedFile} as a stream.
     *
     * @param <R> what the reader returns
     */
    @FunctionalInterface
    public interface ContentReader<R> {
        /**
         * Reads the content.
         *
         * @param content the content (empty when the file does not exist); closing it is optional
         * @return what the caller wants from the content
         * @throws IOException when reading or the caller's own work fails
         */
        R read(InputStream content) throws IOException;
    }

    /**
     * Updates the file under the lock, holding the whole content in memory; for large files use
     * {@link #updateStream}.
     *
     * @param timeout the longest wait for the lock
     * @param transform receives the current content (empty when the file does not exist) and
     *     returns the new content; returning the very array it was given writes nothing. It may be
     *     called a second time, with newer content, when a holder whose lock had run out committed
     *     an update in between: it must depend on its input only
     * @return the content the file has after the update
     * @throws LockTimeoutException when the lock was not obtained in time; nothing was written
     * @throws LockLostException when the lock was lost and a newer holder has written, or the lock
     *     was found lost before the commit; nothing was written
     * @throws LockBackendException when the file cannot be read or written; the file is unchanged
     */
    public byte[] update(Duration timeout, UnaryOperator<byte[]> transform) {
        Objects.requireNonNull(transform, "transform");
        byte[][] result = new byte[1][];
        updateStream(timeout, (current, next) -> {
            byte[] before = current.readAllBytes();
            byte[] after = Objects.requireNonNull(transform.apply(before), "transform returned null");
            result[0] = after;
            if (after == before) {
                return false;
            }
            next.write(after);
            return true;
        });
        return result[0];
    }

    /**
     * Updates the file under the lock as streams: memory use does not depend on the file's size.
     * The new content goes to a new version file (fsynced) and then to a copy that replaces the
     * plain file, as with {@link #update}.
     *
     * @param timeout the longest wait for the lock
     * @param update reads the current content and writes the new one. It may be called a second
     *     time, with newer content, when a holder whose lock had run out committed an update in
     *     between: it must depend on its input only
     * @return true when the new content was committed; false when {@code update} returned false
     * @throws LockTimeoutException when the lock was not obtained in time; nothing was written
     * @throws LockLostException when the lock was lost and a newer holder has written, or the lock
     *     was found lost before the commit; nothing was written
     * @throws LockBackendException when the file cannot be read or written, or {@code update}
     *     threw an {@link IOException} (its cause); the file is unchanged
     */
    public boolean updateStream(Duration timeout, ContentUpdate update) {
        Objects.requireNonNull(update, "update");
        try (LockHandle handle = lock.acquire(timeout)) {
            long token = handle.fencingToken();
            while (true) {
                try (FileVersions.Version head = versions.head()) {
                    if (head.token() >= token) {
                        throw refused(head.token(), token);
                    }
                    step(Step.READ);
                    Path temp = versions.begin(token);
                    try {
                        if (!writeVersion(temp, head, update)) {
                            return false;
                        }
                        if (commit(handle, token, head, temp)) {
                            publish(token, head.token());
                            return true;
                        }
                    } finally {
                        Files.deleteIfExists(temp);
                    }
                }
                // A holder whose lock had already run out committed in between: its token is below
                // ours, so its update stands; apply ours on top of it.
            }
        } catch (IOException e) {
            throw new LockBackendException("cannot update " + file + ": " + e,
                    "check free space and permissions of " + file.getParent() + "; the file is unchanged", e);
        }
    }

    /** {@return false when the update wrote nothing; else the new content is appended to temp and fsynced} */
    private static boolean writeVersion(Path temp, FileVersions.Version head, ContentUpdate update) throws IOException {
        try (FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE, StandardOpenOption.APPEND,
                LinkOption.NOFOLLOW_LINKS);
             InputStream current = head.content()) {
            BufferedOutputStream next = new BufferedOutputStream(Channels.newOutputStream(out), BUFFER) {
                @Override
                public void close() throws IOException {
                    flush(); // the channel stays open for the fsync below
                }
            };
            if (!update.update(current, next)) {
                return false;
            }
            step(Step.TRANSFORMED);
            next.flush();
            out.force(true);
        }
        return true;
    }

    /**
     * {@link #update} for UTF-8 text, holding the whole text in memory.
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
     * Reads the file under the lock, holding the whole content in memory; for large files use
     * {@link #readStream}.
     *
     * @param timeout the longest wait for the lock
     * @param reader receives the content (empty when the file does not exist)
     * @param <R> what the reader returns
     * @return what the reader returned
     */
    public <R> R read(Duration timeout, Function<byte[], R> reader) {
        Objects.requireNonNull(reader, "reader");
        return readStream(timeout, content -> reader.apply(content.readAllBytes()));
    }

    /**
     * Reads the file under the lock as a stream: memory use does not depend on the file's size.
     *
     * @param timeout the longest wait for the lock
     * @param reader receives the content (empty when the file does not exist) while the lock is held
     * @param <R> what the reader returns
     * @return what the reader returned
     * @throws LockTimeoutException when the lock was not obtained in time
     * @throws LockBackendException when the file cannot be read, or {@code reader} threw an
     *     {@link IOException} (its cause)
     */
    public <R> R readStream(Duration timeout, ContentReader<R> reader) {
        Objects.requireNonNull(reader, "reader");
        try (LockHandle ignored = lock.acquire(timeout);
             FileVersions.Version head = versions.head();
             InputStream content = head.content()) {
            return reader.read(content);
        } catch (IOException e) {
            throw new LockBackendException("cannot read " + file + ": " + e, "check that the file is readable", e);
        }
    }

    /** {@return true when the version was committed; false when the caller must read the newest and retry} */
    private boolean commit(LockHandle handle, long token, FileVersions.Version head, Path temp) throws IOException {
        step(Step.WRITTEN);
        handle.verify(); // an early refusal; the commit below is what makes a late writer harmless
        step(Step.VERIFIED);
        if (!versions.commit(temp, head, token)) {
            try (FileVersions.Version now = versions.head()) {
                if (now.token() >= token) {
                    throw refused(now.token(), token);
                }
            }
            return false;
        }
        step(Step.COMMITTED);
        return true;
    }

    /** Replaces the plain file by the newest version, as long as it is ours (see the class comment). */
    private void publish(long token, long parent) throws IOException {
        long slot = parent;
        long own = token;
        for (int round = 0; round < 100; round++) {
            if (!versions.leadsToHead(slot, own)) {
                return; // gone: a newer writer publishes its own
            }
            try (FileVersions.Version head = versions.head()) {
                if (head.token() != own) {
                    slot = head.parent();
                    own = head.token();
                    continue;
                }
                step(Step.PUBLISHING); // between the check above and the rename: the case the class comment names
                replacePlain(head);
                step(Step.PUBLISHED);
            }
            try (FileVersions.Version after = versions.head()) {
                if (after.token() == own) {
                    versions.cleanUp();
                    return;
                }
                // A newer version was committed while we renamed: make sure the plain file shows it.
                slot = after.parent();
                own = after.token();
            }
        }
    }

    private void replacePlain(FileVersions.Version content) throws IOException {
        Path dir = file.getParent();
        Path temp = dir.resolve("." + file.getFileName() + "." + UUID.randomUUID() + ".tmp");
        try {
            try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                content.copyTo(out);
                out.force(true);
            }
            copyPermissions(temp);
            try {
                Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } catch (AtomicMoveNotSupportedException e) {
                throw new LockBackendException("cannot rename " + temp + " over " + file + " atomically",
                        "keep the file on a local file system that supports rename", e);
            }
            FileVersions.forceDirectory(dir);
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    private LockLostException refused(long newer, long token) {
        return new LockLostException(lock.name(), "a holder with fencing token " + newer + " has already written "
                + file + " (this holder's token is " + token + "); nothing was written. If no holder of lock '"
                + lock.name() + "' ever had that token (the lock's backend or directory changed, or the versions were"
                + " copied), remove " + versions.directory() + " (its newest version is in " + file.getFileName()
                + ") and update again", null);
    }

    /** The steps of an update, for tests that pause a holder at each. */
    enum Step { READ, TRANSFORMED, WRITTEN, VERIFIED, COMMITTED, PUBLISHING, PUBLISHED }

    /** Called at each step of an update; tests in this package set it to pause a holder. */
    static volatile java.util.function.Consumer<Step> stepHook;

    private static void step(Step step) {
        java.util.function.Consumer<Step> hook = stepHook;
        if (hook != null) {
            hook.accept(step);
        }
    }

    private void copyPermissions(Path temp) throws IOException {
        PosixFileAttributeView view = Files.getFileAttributeView(file, PosixFileAttributeView.class,
                java.nio.file.LinkOption.NOFOLLOW_LINKS);
        if (view == null || !Files.isRegularFile(file, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Set<PosixFilePermission> permissions = view.readAttributes().permissions();
        Files.setPosixFilePermissions(temp, permissions);
    }

}
