package dev.kanuki.file;

import dev.kanuki.spi.SafeNames;
import dev.kanuki.Capabilities;
import dev.kanuki.LeaseKind;
import dev.kanuki.LockBackendException;
import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.FileLockInterruptionException;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code file:DIR?strategy=os}: one lock file per name, locked with the operating system's
 * record lock ({@code FileChannel.lock}, i.e. {@code fcntl} on Linux). The kernel releases the
 * lock when the holder's process dies, however it dies, and wakes a blocked waiter at once: no
 * polling. Shared (read) locks are the kernel's shared locks. A semaphore of n permits is n
 * lock files, tried in turn.
 *
 * <p>Under the lock the holder reads the file's {@link OwnerRecord}, and writes back the next
 * fencing token and itself as owner: the token survives every process, and {@code status}
 * can name the holder.
 *
 * <p>Hazards handled here: a lock file removed or replaced while this JVM kept it open (checked
 * after every lock, and by {@link #verify}); symbolic links and foreign files planted in the
 * directory (never followed, never deleted); a corrupted record (reported, and fencing resumes
 * from the clock so tokens still increase). Not for NFS without a working lock manager.
 */
final class OsLockBackend implements LockBackend {
    private static final Logger log = LoggerFactory.getLogger(OsLockBackend.class);
    private static final Capabilities CAPABILITIES = Capabilities.builder(LeaseKind.SESSION)
            .crossProcess().sharedLocks().semaphores().persistentFencing().ownerRecords().build();
    private static final long PERMIT_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(5);

    private final LockFileTable.DirectoryFiles files;
    private final Path directory;
    /** Whether {@link KernelLockTable} works for this directory; null until first needed. */
    private volatile Boolean kernelTableUsable;

    OsLockBackend(Path directory) {
        this.directory = directory;
        this.files = LockFileTable.open(directory);
    }

    /** A held OS lock. */
    record OsGrant(LockFile file, FileLock lock, Object fileKey, long fencingToken, boolean shared) implements Grant {
    }

    @Override
    public boolean blockingWait() {
        return true;
    }

    @Override
    public Capabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public String scope() {
        return "file:" + directory;
    }

    private LockFile lockFile(String name) {
        return files.get("L\u0000" + name, name, () -> SafeNames.stem(name, "L") + ".lock");
    }

    private LockFile permitFile(String name, int slot) {
        return files.get("S\u0000" + slot + "\u0000" + name, name,
                () -> SafeNames.stem(name, "S") + ".permit" + slot + ".lock");
    }

    @Override
    public Optional<Grant> tryAcquire(LockRequest request) {
        if (request.mode() == LockMode.PERMIT) {
            for (int slot = 0; slot < request.permits(); slot++) {
                int permitSlot = slot;
                Optional<Grant> grant = attempt(() -> permitFile(request.name(), permitSlot), request, false);
                if (grant.isPresent()) {
                    return grant;
                }
            }
            return Optional.empty();
        }
        return attempt(() -> lockFile(request.name()), request, request.mode() == LockMode.SHARED);
    }

    /**
     * Enters the live LockFile of a name ({@link LockFile#enter()}): one that the table forgot
     * between the lookup and the entry is looked up anew (see {@link LockFileTable}).
     */
    private static LockFile entered(java.util.function.Supplier<LockFile> lookup) {
        while (true) {
            LockFile file = lookup.get();
            try {
                file.enter();
                return file;
            } catch (LockFile.Retired forgotten) {
                // forgotten just now: the next lookup makes a new entry
            }
        }
    }

    private Optional<Grant> attempt(java.util.function.Supplier<LockFile> lookup, LockRequest request, boolean shared) {
        LockFile file = entered(lookup);
        Optional<Grant> grant = Optional.empty();
        try {
            grant = attemptEntered(file, request, shared);
            return grant;
        } finally {
            if (grant.isEmpty()) {
                file.leave(); // a grant leaves at its release
            }
        }
    }

    private Optional<Grant> attemptEntered(LockFile file, LockRequest request, boolean shared) {
        // A file removed by its holder's release between our open and our lock fails the check
        // after locking; a busy name can make that happen a few times in a row.
        for (int round = 0; round < 100; round++) {
            FileChannel channel = file.channel();
            FileLock lock;
            try {
                lock = channel.tryLock(0, Long.MAX_VALUE, shared);
            } catch (OverlappingFileLockException e) {
                return Optional.empty(); // `kanuki status` in this JVM is peeking at the file right now
            } catch (ClosedChannelException e) {
                file.reopenNextTime();
                continue;
            } catch (IOException e) {
                throw LockFile.failure("cannot lock " + file.path, e);
            }
            if (lock == null) {
                return Optional.empty();
            }
            Optional<Grant> grant = confirm(file, lock, request, shared);
            if (grant.isPresent()) {
                return grant;
            }
        }
        throw new LockBackendException("lock file " + file.path + " keeps being removed or replaced",
                "something else is deleting files in " + directory + "; stop it", null);
    }

    /**
     * Checks that the file just locked is still the one at the path, then issues the token.
     * A lock on a file that was removed (or replaced) protects nothing: another process would
     * open the new file and lock it too.
     */
    private Optional<Grant> confirm(LockFile file, FileLock lock, LockRequest request, boolean shared) {
        Object key = file.fileKey();
        if (!file.stillAtPath(key)) {
            releaseQuietly(lock);
            file.reopenNextTime();
            return Optional.empty();
        }
        try {
            long token = shared ? readRecord(file).map(OwnerRecord::token).orElse(0L)
                    : writeNextRecord(file, request);
            return Optional.of(new OsGrant(file, lock, key, token, shared));
        } catch (RuntimeException | Error e) {
            releaseQuietly(lock);
            throw e;
        }
    }

    private long writeNextRecord(LockFile file, LockRequest request) {
        FileChannel channel = file.channel();
        ByteBuffer buffer = OwnerRecord.buffer(file.nameBytes.length);
        try {
            int length = readFully(channel, buffer, OwnerRecord.SIZE);
            long previous = OwnerRecord.token(buffer, length);
            long token;
            if (previous >= 0) {
                // A kept lock file (released lately, by this JVM or another) or one left by a crash:
                // its record goes on, and the directory's counter is raised to it before removal.
                // A record is checked before its token is used: one planted near Long.MAX_VALUE would wrap.
                token = DirectoryFence.checkRecorded(previous, file.path) + 1;
            } else {
                // A new lock file (its name's file was removed, the counter raised to its last token
                // first), or a damaged record: the directory's counter is above every token of every
                // removed file. A damaged record's own tokens may be above it (a kept file's tokens
                // go on without moving the counter): the counter is raised to the clock in µs first,
                // above any token of one name (one acquisition takes far more than a microsecond,
                // and every file of a name starts at most at the clock, as the counter does).
                DirectoryFence fence = DirectoryFence.of(directory);
                long floor = file.lastToken;
                if (previous != OwnerRecord.NO_RECORD) {
                    floor = Math.max(floor, System.currentTimeMillis() * 1000);
                }
                if (floor > 0) {
                    fence.raiseTo(floor); // a file of ours removed behind our back
                }
                token = fence.next();
                if (previous != OwnerRecord.NO_RECORD) {
                    log.warn("lock file {} has a corrupted record ({}); it is rewritten and fencing resumes at {}",
                            file.path, OwnerRecord.decode(buffer, length).problem(), token);
                }
            }
            OwnerRecord.encode(buffer, token, request.owner(), -1, file.nameBytes);
            int size = buffer.remaining();
            while (buffer.hasRemaining()) {
                channel.write(buffer, buffer.position());
            }
            if (previous < 0 && channel.size() > size) {
                channel.truncate(size);
            }
            file.lastToken = token;
            return token;
        } catch (IOException e) {
            throw LockFile.failure("cannot write the owner record of " + file.path, e);
        }
    }

    private static int readFully(FileChannel channel, ByteBuffer buffer, int limit) throws IOException {
        buffer.clear();
        buffer.limit(Math.min(limit, buffer.capacity()));
        while (buffer.hasRemaining()) {
            int n = channel.read(buffer, buffer.position());
            if (n < 0) {
                break;
            }
        }
        int length = buffer.position();
        buffer.flip();
        return length;
    }

    private Optional<OwnerRecord> readRecord(LockFile file) {
        for (int round = 0; ; round++) {
            try {
                ByteBuffer buffer = file.readWithoutCreating(OwnerRecord.SIZE);
                if (buffer == null) {
                    return Optional.empty();
                }
                return Optional.ofNullable(OwnerRecord.decode(buffer, buffer.limit()).record());
            } catch (ClosedChannelException e) {
                if (round >= 3) {
                    return Optional.empty(); // released and removed while we read it, again and again
                }
            } catch (IOException e) {
                throw LockFile.failure("cannot read " + file.path, e);
            }
        }
    }

    /** {@code FileChannel.lock()} returns at once when the file is free: no separate try needed. */
    @Override
    public boolean tryBeforeWait() {
        return false;
    }

    @Override
    public Optional<Grant> awaitAcquire(LockRequest request, Duration maxWait) throws InterruptedException {
        long deadline = System.nanoTime() + maxWait.toNanos();
        if (request.mode() == LockMode.PERMIT) {
            // n files cannot be waited on at once: poll them.
            while (true) {
                Optional<Grant> grant = tryAcquire(request);
                long remaining = deadline - System.nanoTime();
                if (grant.isPresent() || remaining <= 0) {
                    return grant;
                }
                TimeUnit.NANOSECONDS.sleep(Math.min(remaining, PERMIT_POLL_NANOS));
            }
        }
        LockFile file = entered(() -> lockFile(request.name()));
        Optional<Grant> grant = Optional.empty();
        try {
            grant = awaitEntered(file, request, maxWait);
            return grant;
        } finally {
            if (grant.isEmpty()) {
                file.leave(); // a grant leaves at its release
            }
        }
    }

    private Optional<Grant> awaitEntered(LockFile file, LockRequest request, Duration maxWait) throws InterruptedException {
        boolean shared = request.mode() == LockMode.SHARED;
        FileChannel channel = file.channel();
        Alarm alarm = new Alarm(Thread.currentThread(), maxWait);
        FileLock lock;
        try {
            lock = channel.lock(0, Long.MAX_VALUE, shared);
        } catch (ClosedByInterruptException | FileLockInterruptionException e) {
            // The interrupt closed the channel; this JVM held no lock on the file, so nothing was lost.
            file.reopenNextTime();
            Thread.interrupted();
            if (alarm.fired()) {
                return Optional.empty();
            }
            throw new InterruptedException("interrupted while waiting for " + file.path);
        } catch (OverlappingFileLockException e) {
            alarm.cancel();
            TimeUnit.MILLISECONDS.sleep(1); // `kanuki status` in this JVM is peeking; try again shortly
            return Optional.empty();
        } catch (ClosedChannelException e) {
            alarm.cancel();
            file.reopenNextTime();
            return Optional.empty();
        } catch (IOException e) {
            alarm.cancel();
            if (String.valueOf(e.getMessage()).contains("deadlock")) {
                // The kernel saw a cycle of waiters across processes: back off and let the engine retry.
                TimeUnit.MILLISECONDS.sleep(5);
                return Optional.empty();
            }
            throw LockFile.failure("cannot lock " + file.path, e);
        }
        if (alarm.cancel()) {
            Thread.interrupted(); // the alarm fired after the lock was granted: keep the lock, drop the flag
        }
        return confirm(file, lock, request, shared);
    }

    /** An alarm for one blocking wait; none when the wait is unbounded. */
    private static final class Alarm {
        private final InterruptAlarms.Alarm armed;

        Alarm(Thread thread, Duration after) {
            long nanos = after.toNanos();
            armed = nanos >= Long.MAX_VALUE / 4 ? null : InterruptAlarms.SHARED.arm(thread, nanos);
        }

        /** {@return true when the alarm had already fired} */
        boolean cancel() {
            return armed != null && armed.cancel();
        }

        boolean fired() {
            return cancel();
        }
    }

    /**
     * Releases the lock and keeps the file for the next acquisition of the name
     * ({@link LockFileTable.DirectoryFiles#released}): it is removed once unused for a moment, or
     * when more than a few are kept, under an exclusive lock ({@link LockFile#removeIfUnused}), so
     * a lock directory keeps no file for a name nobody has used lately. Removal is safe: every
     * process that locks checks afterwards that the path still names the file it locked
     * ({@link #confirm}), so a waiter that was blocked on the removed file finds out, drops it and
     * opens the new one. A shared lock's file is removed only when nobody holds it any more (the
     * exclusive lock of the removal succeeds only then).
     */
    @Override
    public void release(Grant grant) {
        OsGrant g = (OsGrant) grant;
        try {
            releaseQuietly(g.lock());
        } finally {
            g.file().leave();
            files.released(g.file());
        }
    }

    private static void releaseQuietly(FileLock lock) {
        try {
            if (lock.isValid()) {
                lock.release();
            }
        } catch (ClosedChannelException e) {
            // the channel is gone, and with it the lock
        } catch (IOException e) {
            log.warn("releasing the lock on a file failed; the lock frees when this process exits", e);
        }
    }

    @Override
    public boolean verify(Grant grant) {
        OsGrant g = (OsGrant) grant;
        return g.lock().isValid() && g.file().stillAtPath(g.fileKey());
    }

    @Override
    public LockStatus status(String name) {
        return status(name, null);
    }

    /** @param table the kernel's lock table read once for a whole listing, or null to read it now */
    private LockStatus status(String name, java.util.Map<KernelLockTable.FileId, LockStatus.State> table) {
        while (true) {
            try {
                return status(lockFile(name), name, table);
            } catch (LockFile.Retired forgotten) {
                // the table forgot the name's entry while we looked: look again with a new one
            }
        }
    }

    private LockStatus status(LockFile file, String name, java.util.Map<KernelLockTable.FileId, LockStatus.State> table) {
        try {
            var attrs = Files.readAttributes(file.path, java.nio.file.attribute.BasicFileAttributes.class,
                    LinkOption.NOFOLLOW_LINKS);
            if (!attrs.isRegularFile()) {
                return new LockStatus(name, LockStatus.State.UNKNOWN, Optional.empty(), -1);
            }
        } catch (java.nio.file.NoSuchFileException e) {
            return new LockStatus(name, LockStatus.State.FREE, Optional.empty(), -1);
        } catch (IOException e) {
            throw LockFile.failure("cannot read " + file.path, e);
        }
        LockStatus.State state = peek(file, table);
        Optional<OwnerRecord> record = readRecord(file);
        if (state == LockStatus.State.HELD && record.map(r -> isDead(r.owner())).orElse(false)) {
            // The new holder takes the lock a moment before it writes its record: look once more,
            // and never name a dead process as the holder of a held lock.
            sleepQuietly();
            record = readRecord(file).filter(r -> !isDead(r.owner()));
        }
        return statusOf(name, state, record);
    }

    /**
     * A free lock names no owner: its file's record is the last holder's (a file is kept a moment
     * after release for reuse, or was left by a crash); its token is the last one issued.
     */
    private static LockStatus statusOf(String name, LockStatus.State state, Optional<OwnerRecord> record) {
        long token = record.map(OwnerRecord::token).orElse(-1L);
        Optional<OwnerInfo> owner = state == LockStatus.State.HELD || state == LockStatus.State.UNKNOWN
                ? record.map(OwnerRecord::owner) : Optional.empty();
        return new LockStatus(name, state, owner, token);
    }

    /** Whether each pid was seen dead, for one listing (thousands of locks are often held by a few processes). */
    private static final ThreadLocal<java.util.Map<Long, Boolean>> DEAD_IN_LISTING = new ThreadLocal<>();

    private static boolean isDead(OwnerInfo owner) {
        if (owner.pid() == dev.kanuki.spi.ProcessIdentity.pid()) {
            return false;
        }
        java.util.Map<Long, Boolean> seen = DEAD_IN_LISTING.get();
        if (seen == null) {
            return dev.kanuki.spi.ProcessIdentity.isDeadLocalProcess(owner.host(), owner.pid());
        }
        return seen.computeIfAbsent(owner.pid(),
                pid -> dev.kanuki.spi.ProcessIdentity.isDeadLocalProcess(owner.host(), pid));
    }

    private static void sleepQuietly() {
        try {
            TimeUnit.MILLISECONDS.sleep(2);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Whether the file is locked, from the kernel's lock table where it can be read and matched
     * with this directory (it disturbs nobody), else by a trial lock (which a concurrent
     * {@code tryAcquire} can find busy for a moment).
     */
    private LockStatus.State peek(LockFile file, java.util.Map<KernelLockTable.FileId, LockStatus.State> table) {
        Boolean usable = kernelTableUsable;
        if (usable == null) {
            usable = KernelLockTable.usableIn(directory);
            kernelTableUsable = usable;
            log.debug("status of locks in {} read from {}", directory, usable ? "/proc/locks" : "trial locks");
        }
        if (usable) {
            // The file can be removed and made again (release, next acquire) while we look: look
            // again rather than fall back to a trial lock, which a concurrent try would find busy.
            for (int round = 0; round < 10; round++) {
                LockStatus.State state = table != null && round == 0 ? KernelLockTable.stateOf(file.path, table)
                        : KernelLockTable.stateOf(file.path);
                if (state != null) {
                    return state;
                }
                if (!Files.exists(file.path, LinkOption.NOFOLLOW_LINKS)) {
                    return LockStatus.State.FREE; // released (and its file removed) while we looked
                }
            }
            return LockStatus.State.UNKNOWN;
        }
        return probe(file);
    }

    /** Asks the kernel whether the file is locked, by trying (and at once undoing) a lock. */
    private static LockStatus.State probe(LockFile file) {
        FileChannel channel = file.enter(); // a user: the table does not close the channel under the trial lock
        try {
            FileLock exclusive = channel.tryLock(0, Long.MAX_VALUE, false);
            if (exclusive != null) {
                exclusive.release();
                return LockStatus.State.FREE;
            }
            FileLock shared = channel.tryLock(0, Long.MAX_VALUE, true);
            if (shared != null) {
                shared.release();
                return LockStatus.State.HELD_SHARED;
            }
            return LockStatus.State.HELD;
        } catch (OverlappingFileLockException e) {
            return LockStatus.State.HELD; // this JVM holds it or is waiting for it
        } catch (IOException e) {
            return LockStatus.State.UNKNOWN;
        } finally {
            file.leave();
        }
    }

    @Override
    public java.util.List<LockStatus> list() {
        java.util.List<LockStatus> found = new java.util.ArrayList<>();
        var table = KernelLockTable.snapshot();
        if (kernelTableUsable == null) {
            kernelTableUsable = KernelLockTable.usableIn(directory);
        }
        DEAD_IN_LISTING.set(new java.util.HashMap<>());
        try (var entries = Files.newDirectoryStream(directory, "*.lock")) {
            for (Path entry : entries) {
                String file = entry.getFileName().toString();
                if (file.contains(".permit")) {
                    continue;
                }
                LockStatus status = listedStatus(entry, table);
                if (status != null) {
                    found.add(status);
                }
            }
        } catch (IOException e) {
            throw LockFile.failure("cannot list " + directory, e);
        } finally {
            DEAD_IN_LISTING.remove();
        }
        return found;
    }

    /**
     * The status of one lock file of a listing, from one stat and one read (a directory of
     * 10,000 locks is listed in well under a second): the stat gives the file's identity for the
     * kernel's lock table, the read gives the record and the name after it.
     *
     * @return null when the entry is not one of this strategy's lock files, or vanished
     */
    private LockStatus listedStatus(Path entry, java.util.Map<KernelLockTable.FileId, LockStatus.State> table)
            throws IOException {
        java.util.Map<String, Object> unix;
        try {
            unix = Files.readAttributes(entry, "unix:dev,ino,mode", LinkOption.NOFOLLOW_LINKS);
        } catch (java.nio.file.NoSuchFileException e) {
            return null;
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            unix = null; // not a Unix file system: the slower path below
        }
        if (unix != null && ((((Number) unix.get("mode")).intValue() & 0170000) != 0100000)) {
            return null; // not a regular file
        }
        ByteBuffer buffer = null;
        for (int round = 0; ; round++) {
            try {
                buffer = files.byPath(entry).readWithoutCreating(
                        OwnerRecord.buffer(4 * dev.kanuki.LockNames.MAX_LENGTH).capacity());
                break;
            } catch (ClosedChannelException e) {
                return null; // released and removed while we listed
            } catch (LockFile.Retired forgotten) {
                if (round >= 100) {
                    throw forgotten;
                }
                // forgotten by the table while we listed: read through its new entry
            }
        }
        if (buffer == null) {
            return null;
        }
        String name = OwnerRecord.decodeName(buffer, buffer.limit());
        if (name == null || !lockFile(name).path.equals(entry)) {
            return null;
        }
        if (unix == null || table == null || !Boolean.TRUE.equals(kernelTableUsable)) {
            return status(name, table);
        }
        LockStatus.State state = table.getOrDefault(KernelLockTable.FileId.of(unix), LockStatus.State.FREE);
        Optional<OwnerRecord> record = Optional.ofNullable(OwnerRecord.decode(buffer, buffer.limit()).record());
        if (state == LockStatus.State.HELD && record.map(r -> isDead(r.owner())).orElse(false)) {
            return status(name, table); // a new holder not yet recorded: the careful path
        }
        if (state == LockStatus.State.FREE && record.map(r -> !isDead(r.owner())).orElse(false)) {
            // A free name's file kept for reuse by a live process is not a lock to list. The table
            // was read once, while other processes locked and unlocked: a line can be missed, so
            // such a file is looked up again before it is left out.
            LockStatus.State again = KernelLockTable.stateOf(entry);
            if (again == null || again == LockStatus.State.FREE) {
                return null;
            }
            state = again;
        }
        return statusOf(name, state, record);
    }

    @Override
    public LockStatus breakLock(String name, boolean force) {
        LockStatus status = status(name);
        String owner = status.owner().map(OwnerInfo::describe).orElse("an unknown process");
        throw new UnsupportedOperationException("the os strategy's locks are kernel locks: nobody can remove them"
                + " from outside, and the kernel frees them the moment the holder's process exits"
                + (status.isHeld() ? "; the lock is held by " + owner + ": stop that process" : "; it is free now"));
    }

    /**
     * Removes the lock files (and permit files) of locks nobody holds, the way a release removes
     * its own: take the kernel lock without waiting (a held file is skipped), check that the path
     * still names the file locked, raise the directory's counter to its token, unlink, unlock.
     * A waiter blocked on the removed file finds out when it gets the lock ({@link #confirm}).
     */
    @Override
    public java.util.List<String> prune(boolean dryRun) {
        java.util.List<String> removed = new java.util.ArrayList<>();
        try (var entries = Files.newDirectoryStream(directory, "*.lock")) {
            for (Path entry : entries) {
                java.nio.file.attribute.BasicFileAttributes attrs = SafeFiles.look(entry);
                if (attrs == null || !attrs.isRegularFile()) {
                    continue; // gone, or foreign: never touched
                }
                LockFile file = files.byPath(entry);
                try {
                    if (dryRun) {
                        FileChannel channel = file.enter(); // a user: the table keeps the channel open meanwhile
                        try {
                            FileLock lock = channel.tryLock(0, Long.MAX_VALUE, false);
                            if (lock != null) {
                                boolean ours = file.stillAtPath(file.fileKey());
                                releaseQuietly(lock);
                                if (ours) {
                                    removed.add(entry.toString());
                                }
                            }
                        } finally {
                            file.leave();
                        }
                        continue;
                    }
                    // The same removal as a release's once a kept file goes idle: exclusive lock,
                    // identity check, counter raised to the file's token, unlink.
                    file.channel(); // opened on the file at the path now: the one the identity check expects
                    if (file.removeIfUnused(DirectoryFence.of(directory), log)
                            && !Files.exists(entry, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
                        removed.add(entry.toString());
                    }
                } catch (OverlappingFileLockException | ClosedChannelException | LockFile.Retired e) {
                    // this JVM holds or waits for it, or it was released and removed (or forgotten) meanwhile
                } catch (LockBackendException e) {
                    log.debug("prune leaves {} alone: {}", entry, e.getMessage());
                }
            }
        } catch (IOException e) {
            throw LockFile.failure("cannot prune " + directory, e);
        }
        return removed;
    }

    @Override
    public void close() {
        files.close();
    }
}
