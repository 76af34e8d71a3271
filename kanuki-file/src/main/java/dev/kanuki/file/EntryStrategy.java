package dev.kanuki.file;

import java.io.IOException;
import java.nio.file.Path;

/**
 * How one ttl file strategy represents a held lock on disk: the atomic step that creates the
 * entry, how its owner record is read and rewritten, and how it is removed. The algorithm
 * around it (stale rules, breaking, fencing, renewal) is {@link TtlFileLockBackend}'s.
 */
interface EntryStrategy {

    /** {@return the strategy's name in URIs} */
    String name();

    /** {@return the path of the lock entry for a file-name stem} */
    Path entry(Path directory, String stem);

    /**
     * The one atomic step that takes the lock.
     *
     * @return true when this call created the entry (the lock is ours); false when it exists
     */
    boolean tryCreate(Path entry, TtlRecord record) throws IOException;

    /**
     * Creates the entry without its owner record, when the strategy can: the record (with the
     * fencing token, taken after the entry exists) is then written once by {@link #rewrite}.
     * Until then readers see "no record yet", which the stale rules give a whole lease.
     *
     * @return true when this call created the entry; false when it exists
     * @throws UnsupportedOperationException when the record is part of the entry itself (symlink)
     */
    default boolean tryCreateBare(Path entry) throws IOException {
        throw new UnsupportedOperationException(name());
    }

    /** {@return whether {@link #tryCreateBare} is supported} */
    default boolean createsBare() {
        return false;
    }

    /**
     * Reads the entry without following links.
     *
     * @return what is there: nothing, a record, a damaged record, or something foreign
     */
    Observed read(Path entry) throws IOException;

    /** Replaces the owner record of an entry this process holds (renewal), atomically. */
    void rewrite(Path entry, TtlRecord record) throws IOException;

    /** Removes an entry that is ours or was found stale under the breaker lock. */
    void remove(Path entry) throws IOException;

    /**
     * Removes a leftover of this strategy other than a stale entry (which the backend breaks):
     * for {@code rename}, a free token or a marker whose maker died. Called by {@code prune} for
     * each file of the directory; safe while others lock and unlock.
     *
     * @param path a file of the lock directory
     * @param dryRun only tell whether it would be removed
     * @return whether it was (or would be) removed
     */
    default boolean pruneLeftover(Path path, boolean dryRun) throws IOException {
        return false;
    }

    /** What {@link #read} found. */
    record Observed(State state, TtlRecord record, String problem, long ageMillis) {
        enum State { ABSENT, VALID, CORRUPTED, FREE, FOREIGN }

        static final Observed ABSENT = new Observed(State.ABSENT, null, null, 0);
    }
}
