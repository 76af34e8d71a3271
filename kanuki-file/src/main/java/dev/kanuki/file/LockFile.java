package dev.kanuki.file;

import dev.kanuki.LockBackendException;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One lock file and the channel this JVM keeps open on it. The channel is opened once and
 * reused, because on Linux closing <em>any</em> descriptor of a file releases <em>every</em>
 * POSIX lock this process holds on it: so there is exactly one channel per lock file per JVM,
 * and it is only closed while this JVM holds no lock on the file.
 *
 * <p>Never follows a symbolic link: a link or any other non-regular file planted in place of a
 * lock file is reported, not used, and not deleted.
 *
 * <p>A released file is <em>kept</em> (file and channel) for a short while, so that taking the
 * same name again costs only the lock, the identity check and the record, not a create, a
 * fencing-counter move and an unlink ({@link LockFileTable.DirectoryFiles#released}); it is
 * removed by {@link #removeIfUnused} under an exclusive lock, exactly as a release used to
 * remove it. {@link #enter()} / {@link #leave()} count this JVM's acquisitions in progress on the
 * file, so that it is never removed (nor its channel closed) under one of them.
 *
 * <p>Once its channel is closed while no acquisition of this JVM uses it, the object is
 * <em>retired</em> ({@link #removeIfUnused}, {@link #forgetIfIdle}) and dropped from its table, so
 * that the table holds only the files of names in use or used lately. A retired object never opens
 * the file again (it throws {@link Retired}; the caller looks the name up anew), so the JVM still
 * has at most one open channel per lock file: the table makes a new object only for a path whose
 * object is retired.
 */
final class LockFile {
    final Path path;
    /** The lock name, UTF-8, stored after the record so that locks can be listed. */
    volatile byte[] nameBytes = new byte[0];
    /**
     * Guards the channel, its file key and the users: a lock, not this object's monitor, because
     * what it guards is opened, read and closed under it (file I/O), and a virtual thread that
     * blocks inside {@code synchronized} pins its carrier thread on JDK 21 to 23.
     */
    private final ReentrantLock guard = new ReentrantLock();
    private FileChannel channel;
    private Object fileKey;
    /** Acquisitions (attempts, waits, holds) of this JVM on the file; guarded by {@link #guard}. */
    private int users;
    /** When the last user left ({@link System#nanoTime()}); guarded by {@link #guard}. */
    private long idleSince;
    /** The last fencing token this JVM wrote into the file (0: none). */
    volatile long lastToken;
    /** Set under {@link #guard}, with the channel closed and no user, never unset. */
    private volatile boolean retired;
    /** The table's lookup key for this file, or null (see {@link LockFileTable.DirectoryFiles}). */
    volatile String key;
    /** Told when the last user leaves, so that the table can forget the file once idle. */
    private final Runnable onUnused;

    /** Thrown by a retired file when asked to open the file: look the name up again. */
    static final class Retired extends RuntimeException {
        private static final long serialVersionUID = 1L;

        private Retired() {
            super("the lock file was dropped from this JVM's table; look it up again", null, false, false);
        }
    }

    private static final Retired RETIRED = new Retired();

    LockFile(Path path) {
        this(path, () -> { });
    }

    LockFile(Path path, Runnable onUnused) {
        this.path = path;
        this.onUnused = onUnused;
    }

    /** {@return whether the file was dropped from its table (it never opens the file again)} */
    boolean isRetired() {
        return retired;
    }

    void name(String name) {
        if (nameBytes.length == 0) {
            nameBytes = name.getBytes(java.nio.charset.StandardCharsets.UTF_8);
        }
    }

    /** {@return the open channel, opening it (with the checks) when needed} */
    FileChannel channel() {
        guard.lock();
        try {
            if (retired) {
                throw RETIRED;
            }
            if (channel == null || !channel.isOpen()) {
                open();
            }
            return channel;
        } finally {
            guard.unlock();
        }
    }

    /**
     * Registers an acquisition in progress (until {@link #leave()}) and opens the channel when
     * needed: while there is one, the file is neither removed nor its channel closed by
     * {@link #removeIfUnused}.
     *
     * @return the open channel
     */
    FileChannel enter() {
        guard.lock();
        try {
            FileChannel open = channel();
            users++;
            return open;
        } finally {
            guard.unlock();
        }
    }

    /** Ends what {@link #enter()} began (the attempt failed, or the lock was released). */
    void leave() {
        boolean unused;
        guard.lock();
        try {
            users--;
            idleSince = System.nanoTime();
            unused = users == 0;
        } finally {
            guard.unlock();
        }
        if (unused) {
            onUnused.run();
        }
    }

    /** What {@link #forgetIfIdle} did. */
    enum Forget { FORGOTTEN, IN_USE, NOT_YET }

    /**
     * Retires the file (closes its channel, leaves the file on disk) when no acquisition of this
     * JVM has used it for {@code nanos}. Closing is safe then: every lock this JVM takes on the
     * file is taken between {@link #enter()} and {@link #leave()}, so none is held through the
     * channel. The directory's counter is raised to the last token this JVM wrote into the file,
     * so that a file of this name made later starts above it even if this one is removed behind
     * our back.
     */
    Forget forgetIfIdle(long nanos, DirectoryFence fence, org.slf4j.Logger log) {
        guard.lock();
        try {
            if (retired) {
                return Forget.FORGOTTEN;
            }
            if (users > 0) {
                return Forget.IN_USE;
            }
            if (System.nanoTime() - idleSince < nanos) {
                return Forget.NOT_YET;
            }
            retire(fence, log);
            return Forget.FORGOTTEN;
        } finally {
            guard.unlock();
        }
    }

    /** Closes the channel and retires this object; {@link #guard} held, no user. */
    private void retire(DirectoryFence fence, org.slf4j.Logger log) {
        closeQuietly();
        retired = true;
        long token = lastToken;
        if (token > 0) {
            try {
                fence.raiseTo(token);
            } catch (RuntimeException e) {
                log.warn("could not raise the fencing counter of {} to {}", path.getParent(), token, e);
            }
        }
    }

    /** {@return whether no acquisition of this JVM has used the file for at least {@code nanos}} */
    boolean idleFor(long nanos) {
        guard.lock();
        try {
            return users == 0 && System.nanoTime() - idleSince >= nanos;
        } finally {
            guard.unlock();
        }
    }

    /**
     * Removes the kept file when nobody uses it: takes an exclusive lock (so no process holds it),
     * checks that the path still names the file locked, raises the directory's fencing counter to
     * the file's last token (the next file of this name starts above it) and unlinks it, then
     * unlocks and closes the channel. A waiter of another process blocked on the removed file
     * finds it gone when it gets the lock (its identity check) and opens the next one. When
     * another process holds the file, it is that process's to keep or remove: only the channel
     * is closed.
     *
     * @return false when an acquisition of this JVM uses the file (nothing was done)
     */
    boolean removeIfUnused(DirectoryFence fence, org.slf4j.Logger log) {
        guard.lock();
        try {
            if (retired) {
                return true;
            }
            if (users > 0) {
                return false;
            }
            if (channel == null || !channel.isOpen()) {
                retire(fence, log);
                return true;
            }
            java.nio.channels.FileLock lock;
            try {
                lock = channel.tryLock(0, Long.MAX_VALUE, false);
            } catch (java.nio.channels.OverlappingFileLockException e) {
                return false; // `status` in this JVM is peeking at it: next time
            } catch (IOException e) {
                retire(fence, log);
                return true;
            }
            try {
                if (lock != null && stillAtPath(fileKey)) {
                    java.nio.ByteBuffer record = SafeFiles.readFrom(channel, OwnerRecord.SIZE);
                    long token = Math.max(lastToken, OwnerRecord.token(record, record.limit()));
                    if (token > 0) {
                        fence.raiseTo(token);
                    }
                    Files.deleteIfExists(path);
                }
            } catch (IOException | RuntimeException e) {
                log.warn("could not remove lock file {}; it is reused by the next holder", path, e);
            } finally {
                retire(fence, log); // closing releases the lock with the descriptor: this JVM held no other lock on it
            }
            return true;
        } finally {
            guard.unlock();
        }
    }

    /**
     * Reads the start of the file without creating it and without keeping a descriptor: through
     * the JVM's channel when it is open, else through a short-lived one. The short-lived one is
     * safe to close because this JVM holds no lock on the file while its channel is closed, and
     * none can be taken meanwhile ({@link #channel()} waits for {@link #guard}).
     *
     * @return the bytes read, or null when there is no file
     */
    java.nio.ByteBuffer readWithoutCreating(int max) throws IOException {
        guard.lock();
        try {
            if (retired) {
                throw RETIRED; // another object of this path may hold a lock: closing a descriptor here would free it
            }
            if (channel != null && channel.isOpen()) {
                return SafeFiles.readFrom(channel, max);
            }
            try (FileChannel temporary = SafeFiles.openExisting("lock file", path, false)) {
                return SafeFiles.readFrom(temporary, max);
            } catch (NoSuchFileException e) {
                return null;
            }
        } finally {
            guard.unlock();
        }
    }

    /** {@return the identity (device, inode) of the file the channel is open on} */
    Object fileKey() {
        guard.lock();
        try {
            return fileKey;
        } finally {
            guard.unlock();
        }
    }

    /**
     * @param expected a file identity from {@link #fileKey()}
     * @return true when the path still names that very file (not removed, not replaced)
     */
    boolean stillAtPath(Object expected) {
        try {
            BasicFileAttributes now = Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            return now.isRegularFile() && now.fileKey() != null && now.fileKey().equals(expected);
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            throw failure("cannot check lock file " + path, e);
        }
    }

    /** Closes the channel so the next use reopens the file. Only while this JVM holds no lock on it. */
    void reopenNextTime() {
        guard.lock();
        try {
            closeQuietly();
        } finally {
            guard.unlock();
        }
    }

    void closeQuietly() {
        guard.lock();
        try {
            if (channel != null) {
                try {
                    channel.close();
                } catch (IOException ignored) {
                    // nothing is held on it; the descriptor is gone either way
                }
                channel = null;
                fileKey = null;
            }
        } finally {
            guard.unlock();
        }
    }

    private void open() {
        try {
            // The identity recorded must be that of the file the channel is open on: the path is
            // looked at before and after opening an existing file and must name the same file both
            // times. A file is created (when there is none) with a descriptor of its own, closed at
            // once: this JVM can hold no lock on a file it has just made.
            for (int round = 0; ; round++) {
                if (SafeFiles.checkRegular("lock file", path, true) == null) {
                    try {
                        FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                                LinkOption.NOFOLLOW_LINKS).close();
                    } catch (java.nio.file.FileAlreadyExistsException raced) {
                        // made by another process at the same moment
                    }
                }
                try {
                    SafeFiles.Opened opened = SafeFiles.openExistingWithKey("lock file", path, true);
                    channel = opened.channel();
                    fileKey = opened.fileKey();
                    return;
                } catch (NoSuchFileException removed) {
                    // removed by its holder's release just now: make or open the next one
                }
                if (round >= 1000) {
                    throw new LockBackendException("lock file " + path + " keeps being removed while it is being opened",
                            "something else is removing files in the lock directory; stop it", null);
                }
            }
        } catch (FileSystemException e) {
            throw failure("cannot open lock file " + path, e);
        } catch (IOException e) {
            throw failure("cannot open lock file " + path, e);
        }
    }

    private BasicFileAttributes attributesOrNull() throws IOException {
        try {
            return Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /** Turns an I/O failure into a message that names the path and the likely fix. */
    static LockBackendException failure(String what, IOException e) {
        String reason = e instanceof FileSystemException fse && fse.getReason() != null ? fse.getReason() : e.toString();
        String hint;
        if (e instanceof AccessDeniedException) {
            hint = "make the lock directory writable by user " + System.getProperty("user.name") + " or choose another";
        } else if (reason.contains("No space left")) {
            hint = "free some space on the file system of the lock directory";
        } else if (reason.contains("symbolic links")) {
            reason = "it is a symbolic link";
            hint = "kanuki never follows links in the lock directory; inspect and remove it by hand";
        } else if (reason.contains("Read-only file system")) {
            hint = "put the lock directory on a writable file system";
        } else {
            hint = "check the lock directory";
        }
        return new LockBackendException(what + ": " + reason, hint, e);
    }
}
