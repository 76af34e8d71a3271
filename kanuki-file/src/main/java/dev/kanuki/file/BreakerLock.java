package dev.kanuki.file;

import dev.kanuki.spi.ProcessIdentity;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The short-lived lock ({@code STEM.breaker}, created with {@code CREATE_NEW}) that serialises
 * whoever changes a lock's entry on someone else's behalf: breaking a stale entry, compacting a
 * queue. Its holder does a few file operations and removes it. Renewal does not take it (see
 * {@link TtlFileLockBackend#renew}), so a holder paused while renewing keeps nobody out.
 *
 * <p>A breaker has its own lease, independent of its process being alive: {@link #ttlFor} of
 * the lock's lease (half of it, between {@link #MIN_TTL_MS} and {@link #TTL_MS}); after that
 * anyone clears it, so a process frozen while holding it delays takeover by at most that much.
 * Because a frozen holder of a breaker may resume after it was cleared, it acts (removes an
 * entry, replaces a queue file) only while {@link #isStillOurs()}: the clock says its lease has
 * not run out, so nobody can have cleared it yet. A breaker left by a process that died is stale
 * at once when its process is gone from this host.
 */
final class BreakerLock implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BreakerLock.class);
    /** The longest breaker lease, used where the lock's lease is not known (compaction, prune, {@code break}). */
    static final long TTL_MS = 10_000;
    /** The shortest: a breaker's work is a read and one or two atomic steps, far below this even under load. */
    static final long MIN_TTL_MS = 500;

    private final Path path;
    private final String id;
    private final long leaseUntil;

    private BreakerLock(Path path, String id, long leaseUntil) {
        this.path = path;
        this.id = id;
        this.leaseUntil = leaseUntil;
    }

    /**
     * @return the breaker lease for a lock whose lease is {@code leaseMillis}: half of it, at
     *     least {@link #MIN_TTL_MS}, at most {@link #TTL_MS}
     */
    static long ttlFor(long leaseMillis) {
        return Math.min(TTL_MS, Math.max(MIN_TTL_MS, leaseMillis / 2));
    }

    /** {@return the breaker with the longest lease ({@link #TTL_MS}), or null when another process holds it} */
    static BreakerLock tryTake(Path directory, String stem) throws IOException {
        return tryTake(directory, stem, TTL_MS);
    }

    /** {@return the breaker with a lease of {@code ttlMillis}, or null when another process holds it} */
    static BreakerLock tryTake(Path directory, String stem, long ttlMillis) throws IOException {
        Path path = directory.resolve(stem + ".breaker");
        String id = ProcessIdentity.randomId();
        long now = System.currentTimeMillis();
        TtlRecord record = new TtlRecord(id, ProcessIdentity.pid(), now, now + ttlMillis, ProcessIdentity.host(), "breaker");
        for (int round = 0; round < 2; round++) {
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS)) {
                EntryFiles.writeNew(channel, record.encode());
                return new BreakerLock(path, id, record.leaseUntilMillis());
            } catch (FileAlreadyExistsException e) {
                String text = EntryFiles.readText(path);
                if (text == null) {
                    continue;
                }
                // An unreadable breaker is junk after a second: a real one is written right after it is made.
                if (!TtlFileLockBackend.isStale(EntryFiles.observe(text, path), 1000)) {
                    return null;
                }
                // A breaker whose holder died mid-way: its work is a read and one atomic step, so
                // clearing it cannot undo anything half done.
                Files.deleteIfExists(path);
            }
        }
        return null;
    }

    /**
     * Removes a breaker left by a process that died (or junk a second old), for {@code prune}:
     * taking it clears such a breaker, and closing removes ours; a live breaker is left alone.
     *
     * @param dryRun only tell whether it would be removed
     * @return whether it was (or would be) removed
     */
    static boolean clearIfStale(Path directory, String stem, boolean dryRun) throws IOException {
        Path path = directory.resolve(stem + ".breaker");
        String text = EntryFiles.readText(path);
        if (text == null || !TtlFileLockBackend.isStale(EntryFiles.observe(text, path), 1000)) {
            return false;
        }
        if (dryRun) {
            return true;
        }
        try (BreakerLock ours = tryTake(directory, stem)) {
            return ours != null;
        }
    }

    /**
     * Whether this breaker's lease has not run out, by the clock: nobody can have cleared it as
     * stale yet (they go by the same lease), so the work it guards may go on. Checked right
     * before each step that changes the directory; a process frozen for longer than the lease
     * between this check and that step is the one window left (see {@code docs/backends/file.md}).
     */
    boolean isStillOurs() {
        return System.currentTimeMillis() < leaseUntil;
    }

    /** Removes the breaker if it is still ours (past its lease it may be someone else's by now: left to expire). */
    @Override
    public void close() {
        if (!isStillOurs()) {
            return; // a breaker of ours left behind is stale by now: whoever comes next clears it
        }
        try {
            String text = EntryFiles.readText(path);
            TtlRecord.Read read = text == null ? null : TtlRecord.decode(text);
            if (read != null && read.record() != null && read.record().id().equals(id)) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            log.warn("could not remove breaker {}; it expires in {} ms", path, TTL_MS, e);
        }
    }
}
