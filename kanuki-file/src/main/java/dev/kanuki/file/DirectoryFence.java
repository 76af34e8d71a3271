package dev.kanuki.file;

import dev.kanuki.LockBackendException;
import java.io.IOException;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The fencing counter of a whole lock directory: one empty file whose <em>name</em> holds the
 * value, {@code kanuki-fence.N}. Taking the next token renames it to {@code kanuki-fence.N+1}:
 * a rename of a file that is gone fails, so two processes can never both move N to N+1 (a
 * compare-and-swap made of one rename, which works on NFS too). One counter for every name
 * keeps each name's tokens increasing even though a released name leaves no file behind; the
 * cost is that tokens of one name are increasing but not consecutive.
 *
 * <p>The counter is made once, by whoever creates the marker {@code kanuki-fence}
 * ({@code CREATE_NEW}); it starts at the current time in microseconds, so a counter made again
 * (its file removed by hand) still starts above every token given before, as long as fewer than
 * a million tokens a second were taken on average. That leaves two files in the directory for
 * all fencing. Each JVM remembers the last value it saw, so the next rename usually succeeds at
 * once; when the counter moved on, a few probes forward find it, and only then is the directory
 * listed.
 *
 * <p>Every value read from the directory is checked: a counter (or a token a lock file's record
 * carries) at or above {@link #MAX_TOKEN}, or below zero, was not made by kanuki — counters start at the clock in
 * microseconds, about 2<sup>51</sup>, and a million tokens a second would take over 100,000 years
 * to reach 2<sup>62</sup> — so it is refused with an error naming the file, never used to make a
 * token that would wrap to a negative one or go back.
 */
final class DirectoryFence {
    static final String PREFIX = "kanuki-fence.";
    private static final String MARKER = "kanuki-fence";
    private static final int PROBES = 64;
    /** The largest token kanuki gives; a counter or record at or above it was planted or damaged. */
    static final long MAX_TOKEN = 1L << 62;
    private static final ConcurrentHashMap<Path, DirectoryFence> BY_DIRECTORY = new ConcurrentHashMap<>();

    private final Path directory;
    private final AtomicLong known = new AtomicLong(-1);

    private DirectoryFence(Path directory) {
        this.directory = directory;
    }

    /** {@return the counter of a lock directory (one object per directory per JVM)} */
    static DirectoryFence of(Path directory) {
        return BY_DIRECTORY.computeIfAbsent(directory, DirectoryFence::new);
    }

    private Path counter(long value) {
        return directory.resolve(PREFIX + value);
    }

    /** {@return the next token, strictly greater than every token this directory gave before} */
    long next() {
        try {
            long n = known.get();
            for (int round = 0; round < 5; round++) {
                if (n < 0) {
                    n = locateForward();
                }
                for (int probe = 0; probe < PROBES; probe++, n++) {
                    if (n >= MAX_TOKEN) {
                        throw outOfRange(counter(n), n);
                    }
                    if (tryMove(n, n + 1)) {
                        known.accumulateAndGet(n + 1, Math::max);
                        return n + 1;
                    }
                }
                n = -1;
            }
            throw new LockBackendException("the fencing counter " + directory.resolve(PREFIX + "*") + " keeps moving",
                    "something else renames files in " + directory, null);
        } catch (IOException e) {
            throw LockFile.failure("cannot take a fencing token from " + directory.resolve(PREFIX + "*"), e);
        }
    }

    /** Makes the counter at least {@code value} (a token issued from elsewhere, before its record is removed). */
    void raiseTo(long value) {
        if (value > MAX_TOKEN) {
            throw new LockBackendException("a lock file in " + directory + " carries the fencing token " + value
                    + ", above any token kanuki gives (" + MAX_TOKEN + "): it was written by something else",
                    "find out who else can write " + directory + "; remove the lock files whose records are damaged"
                            + " when no process uses them", null);
        }
        if (known.get() >= value) {
            return; // the counter only moves up, and it was at least this
        }
        try {
            // The value last seen here is usually still the counter (a kept os lock file's tokens
            // go on without moving it): try it before listing the directory.
            long last = known.get();
            if (last >= 0 && last < value && tryMove(last, value)) {
                known.accumulateAndGet(value, Math::max);
                return;
            }
            for (int round = 0; round < 100; round++) {
                long n = locateForward();
                if (n >= value || tryMove(n, value)) {
                    known.accumulateAndGet(Math.max(n, value), Math::max);
                    return;
                }
            }
            throw new LockBackendException("the fencing counter " + directory.resolve(PREFIX + "*") + " keeps moving",
                    "something else renames files in " + directory, null);
        } catch (IOException e) {
            throw LockFile.failure("cannot raise the fencing counter in " + directory, e);
        }
    }

    /** @throws LockBackendException when a token read from a lock file's record is beyond {@link #MAX_TOKEN} */
    static long checkRecorded(long token, Path file) {
        if (token >= MAX_TOKEN) {
            throw new LockBackendException("the record of lock file " + file + " carries the fencing token " + token
                    + ", at or above the largest kanuki gives (" + MAX_TOKEN + "): it was written by something else;"
                    + " no token is taken from it", "find out who else can write " + file.getParent()
                    + "; when no process uses the lock, remove " + file, null);
        }
        return token;
    }

    private LockBackendException outOfRange(Path file, long value) {
        return new LockBackendException("the fencing counter " + file + " is at " + value + ", outside the tokens kanuki"
                + " gives (0 to " + MAX_TOKEN + "): it was moved by something else; no token is taken from it"
                + " (a wrapped or smaller token would let a stale holder's writes through)",
                "find out who else can write " + directory + " (see the trust rule in docs/backends/file.md); to start"
                        + " again, stop every process using it and remove " + directory.resolve(PREFIX + "*") + " and "
                        + directory.resolve(MARKER) + " (resources that saw the large tokens must then forget them)", null);
    }

    private boolean tryMove(long from, long to) throws IOException {
        try {
            Files.move(counter(from), counter(to), StandardCopyOption.ATOMIC_MOVE);
            return true;
        } catch (NoSuchFileException e) {
            return false;
        } catch (AtomicMoveNotSupportedException e) {
            throw new LockBackendException("the file system of " + directory + " cannot rename atomically",
                    "use a local file system for the lock directory", e);
        }
    }

    /**
     * {@link #locate}, refusing a counter below a value this JVM has seen: the counter only moves
     * up, so a lower one was moved back by something else, and a token taken from it would repeat
     * tokens given before.
     */
    private long locateForward() throws IOException {
        // Read before listing: the counter was at least this when read, and other threads may raise
        // it while the listing runs (a listing is a snapshot, and may then show a value below the new one).
        long seen = known.get();
        long n = locate();
        if (n < seen) {
            throw new LockBackendException("the fencing counter " + counter(n) + " went back (this process saw "
                    + counter(seen).getFileName() + "): it was moved by something else; no token is taken from it",
                    "find out who else can write " + directory + " (see the trust rule in docs/backends/file.md)", null);
        }
        return n;
    }

    /** Finds the counter by listing the directory, making it when it was never made. */
    private long locate() throws IOException {
        for (int round = 0; round < 40; round++) {
            long found = list();
            if (found >= 0) {
                return found;
            }
            if (round == 0 && create()) {
                continue;
            }
            // A listing can miss a file renamed while it runs; or the maker is between its two steps
            // (microseconds apart). Past that, the counter was removed by hand: make it again.
            if (round >= 15) {
                recreateLost();
            }
            sleep(round < 10 ? 1 : 10);
        }
        throw new LockBackendException("the fencing counter " + directory.resolve(PREFIX + "*") + " is missing",
                "remove " + directory.resolve(MARKER) + " when no process uses the directory", null);
    }

    /** {@return true when this call made the counter} */
    private boolean create() throws IOException {
        try {
            Files.createFile(directory.resolve(MARKER));
        } catch (FileAlreadyExistsException e) {
            return false;
        }
        Files.createFile(counter(System.currentTimeMillis() * 1000));
        return true;
    }

    /** The marker exists but the counter has been gone for a while (removed by hand): make it again. */
    private void recreateLost() throws IOException {
        try (BreakerLock breaker = BreakerLock.tryTake(directory, MARKER)) {
            if (breaker != null && list() < 0) {
                long base = Math.max(System.currentTimeMillis() * 1000, known.get() + 1);
                try {
                    Files.createFile(counter(base));
                } catch (FileAlreadyExistsException e) {
                    // made meanwhile
                }
            }
        }
    }

    private long list() throws IOException {
        long found = -1;
        // A prefix filter, not the glob PREFIX + "*": a glob compiles a regular expression, which
        // costs the start-up of a short-lived command (kanuki run) about a millisecond.
        DirectoryStream.Filter<Path> counters = entry -> entry.getFileName().toString().startsWith(PREFIX);
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory, counters)) {
            for (Path entry : entries) {
                String suffix = entry.getFileName().toString().substring(PREFIX.length());
                try {
                    long value = Long.parseLong(suffix);
                    if (!suffix.equals(Long.toString(value))) {
                        continue; // "+5", "007": not a name kanuki makes
                    }
                    BasicFileAttributes attrs = SafeFiles.look(entry);
                    if (attrs != null && attrs.isRegularFile()) {
                        if (value < 0 || value >= MAX_TOKEN) {
                            throw outOfRange(entry, value);
                        }
                        found = Math.max(found, value);
                    }
                } catch (NumberFormatException ignored) {
                    // a temp or foreign file
                }
            }
        }
        return found;
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("interrupted while looking for the fencing counter", "", e);
        }
    }
}
