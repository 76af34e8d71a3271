package dev.kanuki.sqlite;

import java.util.Locale;
import java.util.Set;

/**
 * The SQLite settings a {@code sqlite:} URI chooses.
 *
 * @param journalMode {@code wal} (default) or {@code delete}: only applied when a lock database
 *     is created; WAL lets {@code kanuki status} read the owner record while the lock is held
 *     and makes each commit one append, but needs shared memory (no network file systems)
 * @param synchronous {@code normal} (default): a committed fencing token survives the crash of
 *     any process, which is what frees the lock; {@code full}: it also survives power loss, at
 *     the cost of an fsync per acquisition; {@code off}: neither is promised for power loss
 * @param setupBusyTimeoutMillis how long opening a new lock database may wait for another
 *     process creating it at the same moment
 */
record SqliteSettings(String journalMode, String synchronous, int setupBusyTimeoutMillis) {
    static final Set<String> JOURNAL_MODES = Set.of("wal", "delete");
    static final Set<String> SYNCHRONOUS = Set.of("off", "normal", "full");

    static SqliteSettings of(String journal, String synchronous) {
        String j = journal.toLowerCase(Locale.ROOT);
        String s = synchronous.toLowerCase(Locale.ROOT);
        if (!JOURNAL_MODES.contains(j)) {
            throw new IllegalArgumentException("journal=" + journal + ": use wal or delete");
        }
        if (!SYNCHRONOUS.contains(s)) {
            throw new IllegalArgumentException("synchronous=" + synchronous + ": use off, normal or full");
        }
        return new SqliteSettings(j, s, 5000);
    }
}
