package dev.kanuki.file;

import dev.kanuki.LockBackendException;
import dev.kanuki.file.EntryStrategy.Observed;
import dev.kanuki.spi.ProcessIdentity;
import dev.kanuki.spi.SafeNames;
import java.nio.file.Path;
import java.time.Instant;

/**
 * The refusal an acquirer gets under {@code keepStale=true} when the lock's entry is stale: the
 * entry is left for a person to inspect, and the one-line message names the dead holder, since
 * when the lock is stale, and the command that breaks it.
 */
final class KeptStale {
    private KeptStale() {
    }

    /** The refusal; a semaphore's other permits are still tried before it is thrown. */
    static final class Refusal extends LockBackendException {
        private static final long serialVersionUID = 1L;

        Refusal(String message, String hint) {
            super(message, hint, null);
        }
    }

    static Refusal failure(Path directory, String strategy, String name, Observed seen) {
        TtlRecord record = seen.record();
        String uri = "file:" + directory + "?strategy=" + strategy + "&keepStale=true";
        String hint = "inspect it, then break it with: kanuki break -b " + shellQuote(uri) + " " + shellQuote(name);
        if (record == null) {
            return new Refusal("lock '" + SafeNames.printable(name) + "' is stale and kept (keepStale=true): its entry "
                    + "is unreadable and unchanged since " + Instant.ofEpochMilli(System.currentTimeMillis() - seen.ageMillis())
                    + ", so its holder is unknown", hint);
        }
        long now = System.currentTimeMillis();
        String why;
        if (record.leaseUntilMillis() < now) {
            why = "its lease ran out at " + Instant.ofEpochMilli(record.leaseUntilMillis());
        } else if (ProcessIdentity.isDeadLocalProcess(record.host(), record.pid())) {
            why = "its process is gone (the lease would run until " + Instant.ofEpochMilli(record.leaseUntilMillis()) + ")";
        } else {
            why = "it was found stale";
        }
        String message = "lock '" + SafeNames.printable(name) + "' is stale and kept (keepStale=true): its holder, "
                + record.owner().describe() + ", is gone: " + why;
        return new Refusal(message, hint);
    }

    private static String shellQuote(String text) {
        return "'" + text.replace("'", "'\\''") + "'";
    }
}
