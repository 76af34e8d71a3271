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
 * queue. Its holder does a few file operations and removes it. A breaker left by a process that
 * died is itself stale after {@link #TTL_MS} (or at once, when its process is gone from this host).
 */
final class BreakerLock implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BreakerLock.class);
    static final long TTL_MS = 10_000;

    private final Path path;
    private final String id;

    private BreakerLock(Path path, String id) {
        this.path = path;
        this.id = id;
    }

    /** @return the breaker, or null when another process holds it */
    static BreakerLock tryTake(Path directory, String stem) throws IOException {
        Path path = directory.resolve(stem + ".breaker");
        String id = ProcessIdentity.randomId();
        long now = System.currentTimeMillis();
        TtlRecord record = new TtlRecord(id, ProcessIdentity.pid(), now, now + TTL_MS, ProcessIdentity.host(), "breaker");
        for (int round = 0; round < 2; round++) {
            try (FileChannel channel = FileChannel.open(path, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS)) {
                EntryFiles.writeNew(channel, record.encode());
                return new BreakerLock(path, id);
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

    /** Removes the breaker if it is still ours. */
    @Override
    public void close() {
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
