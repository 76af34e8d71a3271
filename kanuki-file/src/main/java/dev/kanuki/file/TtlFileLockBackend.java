package dev.kanuki.file;

import dev.kanuki.spi.SafeNames;
import dev.kanuki.Capabilities;
import dev.kanuki.LeaseKind;
import dev.kanuki.LockBackendException;
import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.file.EntryStrategy.Observed;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.ProcessIdentity;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The algorithm shared by the ttl file strategies ({@code mkdir}, {@code symlink},
 * {@code rename}, {@code create}): a lock is an entry in the lock directory made by one atomic
 * step ({@link EntryStrategy}), carrying an owner record with a lease the engine renews.
 *
 * <p><b>Stale locks.</b> An entry is stale when its lease has run out, or its owner is on this
 * host and its process is gone, or its record is unreadable and the entry has not changed for a
 * whole lease. A stale entry is broken under a <em>breaker lock</em> ({@code STEM.breaker},
 * created with {@code CREATE_NEW}): take the breaker, read the entry again, and remove it only if
 * it is still the same stale owner. Two breakers cannot both act, and a breaker can never remove
 * an entry created after its first look, because a fresh entry has a different owner id (this is
 * the stale-lock race: A and B see an old lock, A removes it, C locks, B removes C's lock).
 * The breaker then competes for the lock like anyone else. See {@code docs/backends/file.md}.
 *
 * <p><b>Fencing.</b> Tokens come from the directory's {@link DirectoryFence} (a rename-based compare-and-swap),
 * taken after the entry is created and confirmed by reading the entry back: a holder whose lease
 * ran out while it was paused gets no token it could use.
 */
final class TtlFileLockBackend implements LockBackend {
    private static final Logger log = LoggerFactory.getLogger(TtlFileLockBackend.class);
    private static final Capabilities CAPABILITIES = Capabilities.builder(LeaseKind.TTL)
            .crossProcess().semaphores().persistentFencing().ownerRecords().build();
    /** A holder does not remove its entry when its lease has less than this left. */
    private static final long RELEASE_MARGIN_MS = 500;
    /** How long an unreadable entry must be unchanged before {@code break} or {@code prune} removes it. */
    private static final long UNREADABLE_GRACE_MS = 30_000;
    /**
     * Temporary names ({@code .tmp.ID}, {@code mkdir}'s {@code .removed.ID}) live for
     * microseconds; one this old was left by a process that died between its two steps.
     */
    static final long LEFTOVER_AGE_MS = 60_000;

    private final Path directory;
    private final EntryStrategy strategy;
    private final ConcurrentHashMap<String, String> stems = new ConcurrentHashMap<>();

    TtlFileLockBackend(Path directory, EntryStrategy strategy) {
        this.directory = directory;
        this.strategy = strategy;
    }

    /** A held ttl lock; its record changes at each renewal. */
    static final class TtlGrant implements Grant {
        final String stem;
        final Path entry;
        final long token;
        volatile TtlRecord record;

        TtlGrant(String stem, Path entry, long token, TtlRecord record) {
            this.stem = stem;
            this.entry = entry;
            this.token = token;
            this.record = record;
        }

        @Override
        public long fencingToken() {
            return token;
        }
    }

    @Override
    public Capabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public String scope() {
        return "file:" + directory + "?strategy=" + strategy.name();
    }

    String stem(String name, String namespace) {
        String key = namespace + "\u0000" + name;
        String stem = stems.get(key);
        if (stem == null) {
            stem = SafeNames.stem(name, namespace);
            if (stems.size() < 10_000) {
                stems.put(key, stem);
            }
        }
        return stem;
    }

    @Override
    public Optional<Grant> tryAcquire(LockRequest request) {
        if (request.mode() == LockMode.SHARED) {
            throw new UnsupportedOperationException("strategy " + strategy.name() + " has no shared locks");
        }
        try {
            if (request.mode() == LockMode.PERMIT) {
                for (int slot = 0; slot < request.permits(); slot++) {
                    Optional<Grant> grant = attempt(stem(request.name(), "S" + slot), request);
                    if (grant.isPresent()) {
                        return grant;
                    }
                }
                return Optional.empty();
            }
            return attempt(stem(request.name(), "L"), request);
        } catch (IOException e) {
            throw LockFile.failure("cannot take lock '" + SafeNames.printable(request.name()) + "' in " + directory, e);
        }
    }

    private Optional<Grant> attempt(String stem, LockRequest request) throws IOException {
        Path entry = strategy.entry(directory, stem);
        long leaseMillis = request.lease().toMillis();
        OwnerInfo owner = request.owner();
        long now = System.currentTimeMillis();
        TtlRecord mine = new TtlRecord(owner.id(), owner.pid(), now, now + leaseMillis, owner.host(), request.name());
        for (int round = 0; round < 3; round++) {
            boolean bare = strategy.createsBare();
            if (bare ? strategy.tryCreateBare(entry) : strategy.tryCreate(entry, mine)) {
                long token;
                Observed check;
                try {
                    PauseForTests.at("acquire");
                    token = DirectoryFence.of(directory).next();
                    mine = mine.withToken(token);
                    strategy.rewrite(entry, mine); // the token in the record, for status
                    check = strategy.read(entry);
                } catch (IOException | RuntimeException | Error e) {
                    undo(entry, mine, bare);
                    throw e;
                }
                if (check.state() == Observed.State.VALID && check.record().id().equals(mine.id())) {
                    return Optional.of(new TtlGrant(stem, entry, token, mine));
                }
                return Optional.empty(); // broken while we took the token: our lease ran out meanwhile
            }
            Observed seen = strategy.read(entry);
            switch (seen.state()) {
                case ABSENT:
                    continue;
                case FOREIGN:
                    throw new LockBackendException("lock entry " + entry + " is " + seen.problem()
                            + "; kanuki never follows or deletes such entries",
                            "if you did not create it, inspect it and remove it by hand", null);
                default:
                    if (!isStale(seen, leaseMillis)) {
                        return Optional.empty();
                    }
                    BreakResult broken = breakStale(stem, entry, seen, leaseMillis, false);
                    if (broken == BreakResult.CHANGED || broken == BreakResult.BUSY) {
                        return Optional.empty();
                    }
            }
        }
        return Optional.empty();
    }

    /**
     * Removes the entry this attempt created when a later step failed, so that the next acquirer
     * is not blocked until this process exits or the lease runs out.
     */
    private void undo(Path entry, TtlRecord mine, boolean bare) {
        try {
            Observed now = strategy.read(entry);
            boolean ours = now.state() == Observed.State.VALID ? now.record().id().equals(mine.id())
                    : bare && (now.state() == Observed.State.CORRUPTED || now.state() == Observed.State.FREE);
            if (ours) { // a bare entry is ours: nobody breaks one before it is a whole lease old
                strategy.remove(entry);
            }
        } catch (IOException | RuntimeException e) {
            log.warn("could not remove {} after a failed acquisition; it frees when its lease runs out", entry, e);
        }
    }

    /**
     * Calls {@code onChange} when the request's entry (or, for a semaphore, any of its permit
     * entries) is removed, from the kernel's notifications; null where the
     * directory cannot be watched (a network file system), so the waiter keeps polling.
     */
    @Override
    public dev.kanuki.spi.ChangeSubscription watchChanges(LockRequest request, Runnable onChange) {
        DirectoryWatcher watcher = DirectoryWatcher.of(directory);
        if (watcher == null || request.mode() == LockMode.SHARED) {
            return null;
        }
        List<String> names = new ArrayList<>();
        if (request.mode() == LockMode.PERMIT) {
            for (int slot = 0; slot < request.permits(); slot++) {
                names.add(strategy.entry(directory, stem(request.name(), "S" + slot)).getFileName().toString());
            }
        } else {
            names.add(strategy.entry(directory, stem(request.name(), "L")).getFileName().toString());
        }
        // Only a removal can free a ttl entry: its creation and record rewrites (three events per
        // acquisition) would wake every waiting process for nothing.
        return watcher.subscribeToRemovals(names, onChange);
    }

    /** The stale rules; {@code graceMillis} is how long an unreadable entry is given. */
    static boolean isStale(Observed seen, long graceMillis) {
        return isStale(seen, graceMillis, null);
    }

    /**
     * The stale rules, with the answers about owner processes kept in {@code deadByPid} (a
     * listing of 10,000 locks of one holder asks the kernel about its process once).
     */
    private static boolean isStale(Observed seen, long graceMillis, java.util.Map<Long, Boolean> deadByPid) {
        return switch (seen.state()) {
            case VALID -> seen.record().leaseUntilMillis() < System.currentTimeMillis()
                    || (deadByPid == null ? ProcessIdentity.isDeadLocalProcess(seen.record().host(), seen.record().pid())
                            : deadByPid.computeIfAbsent(seen.record().pid(),
                                    pid -> ProcessIdentity.isDeadLocalProcess(seen.record().host(), pid)));
            case CORRUPTED, FREE -> seen.ageMillis() > graceMillis;
            default -> false;
        };
    }

    /** What {@link #breakStale} did. */
    enum BreakResult {
        /** The stale entry was removed. */
        REMOVED,
        /** It was already gone (released, or another breaker removed it). */
        ALREADY_GONE,
        /** It changed hands since the first look: a new owner, nothing removed. */
        CHANGED,
        /** Another breaker is at work; nothing was done. */
        BUSY
    }

    /**
     * Breaks a stale entry under the breaker lock: reads it again and removes it only if it is
     * still the entry first seen, and still stale (or {@code force}).
     *
     * @param force remove it even if it is live (only {@code kanuki break --force})
     */
    BreakResult breakStale(String stem, Path entry, Observed seen, long graceMillis, boolean force) throws IOException {
        try (BreakerLock breaker = BreakerLock.tryTake(directory, stem)) {
            if (breaker == null) {
                return BreakResult.BUSY;
            }
            Observed again = strategy.read(entry);
            if (again.state() == Observed.State.ABSENT) {
                return BreakResult.ALREADY_GONE;
            }
            if (!sameEntry(seen, again) || !(force || isStale(again, graceMillis))) {
                return BreakResult.CHANGED; // released and taken again since our first look
            }
            PauseForTests.at("break");
            log.info("breaking {} lock {} of {}", force ? "live" : "stale", entry,
                    again.record() == null ? "unknown owner (" + again.problem() + ")" : again.record().owner().describe());
            strategy.remove(entry);
            return BreakResult.REMOVED;
        }
    }

    private static boolean sameEntry(Observed first, Observed second) {
        if (first.state() != second.state()) {
            return false;
        }
        return first.record() == null || first.record().id().equals(second.record().id());
    }

    /**
     * Renews under the breaker lock, so that the check "still mine" and the rewrite cannot be
     * split by a breaker removing the entry and a new holder creating one in between.
     */
    @Override
    public boolean renew(Grant grant, Duration lease) {
        TtlGrant g = (TtlGrant) grant;
        try {
            for (int round = 0; round < 20; round++) {
                try (BreakerLock breaker = BreakerLock.tryTake(directory, g.stem)) {
                    if (breaker != null) {
                        if (!isMine(g)) {
                            return false;
                        }
                        PauseForTests.at("renew");
                        TtlRecord renewed = g.record.withLeaseUntil(System.currentTimeMillis() + lease.toMillis());
                        strategy.rewrite(g.entry, renewed);
                        g.record = renewed;
                        return true;
                    }
                }
                Thread.sleep(10);
            }
            throw new LockBackendException("could not renew " + g.entry + ": another process holds its breaker lock",
                    "the watchdog retries before the lease runs out", null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new LockBackendException("interrupted while renewing " + g.entry, "", e);
        } catch (IOException e) {
            throw LockFile.failure("cannot renew the lease of " + g.entry, e);
        }
    }

    private boolean isMine(TtlGrant g) throws IOException {
        Observed now = strategy.read(g.entry);
        return now.state() == Observed.State.VALID && now.record().id().equals(g.record.id())
                && now.record().leaseUntilMillis() >= System.currentTimeMillis();
    }

    @Override
    public boolean verify(Grant grant) {
        TtlGrant g = (TtlGrant) grant;
        try {
            return isMine(g);
        } catch (IOException e) {
            throw LockFile.failure("cannot check lock entry " + g.entry, e);
        }
    }

    @Override
    public void release(Grant grant) {
        TtlGrant g = (TtlGrant) grant;
        try {
            Observed now = strategy.read(g.entry);
            boolean mine = now.state() == Observed.State.VALID && now.record().id().equals(g.record.id());
            if (!mine) {
                return; // broken or taken over: nothing of ours to remove
            }
            PauseForTests.at("release");
            if (now.record().leaseUntilMillis() - System.currentTimeMillis() < RELEASE_MARGIN_MS) {
                // So close to expiry that a breaker may be removing it right now: let it expire instead.
                log.warn("lease of {} ran out before release; leaving it to expire", g.entry);
                return;
            }
            strategy.remove(g.entry);
        } catch (IOException e) {
            log.warn("releasing {} failed; it frees when its lease runs out", g.entry, e);
        }
    }

    @Override
    public LockStatus status(String name) {
        String stem = stem(name, "L");
        try {
            return statusOf(name, stem, strategy.read(strategy.entry(directory, stem)));
        } catch (IOException e) {
            throw LockFile.failure("cannot read lock '" + SafeNames.printable(name) + "' in " + directory, e);
        }
    }

    private LockStatus statusOf(String name, String stem, Observed seen) {
        return statusOf(name, seen, null);
    }

    private LockStatus statusOf(String name, Observed seen, java.util.Map<Long, Boolean> deadByPid) {
        long token = seen.state() == Observed.State.VALID && seen.record().token() > 0 ? seen.record().token() : -1;
        return switch (seen.state()) {
            case ABSENT -> new LockStatus(name, LockStatus.State.FREE, Optional.empty(), token);
            case FREE -> new LockStatus(name, LockStatus.State.HELD, Optional.empty(), token); // mid-acquisition
            case VALID -> new LockStatus(name, isStale(seen, 0, deadByPid) ? LockStatus.State.STALE : LockStatus.State.HELD,
                    Optional.of(seen.record().owner()), token);
            case CORRUPTED, FOREIGN -> new LockStatus(name, LockStatus.State.UNKNOWN, Optional.empty(), token);
        };
    }

    @Override
    public List<LockStatus> list() {
        List<LockStatus> found = new ArrayList<>();
        java.util.Map<Long, Boolean> deadByPid = new java.util.HashMap<>();
        String suffix = strategy.entry(directory, "x").getFileName().toString().substring(1);
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory, "*" + suffix)) {
            for (Path entry : entries) {
                String file = entry.getFileName().toString();
                String stem = file.substring(0, file.length() - suffix.length());
                Observed seen = strategy.read(entry);
                if (seen.state() == Observed.State.VALID) {
                    String name = seen.record().lockName();
                    if (stem(name, "L").equals(stem)) { // semaphore permits are listed by name only
                        found.add(statusOf(name, seen, deadByPid));
                    }
                } else if (seen.state() != Observed.State.ABSENT) {
                    // An entry that blocks a lock but names none: show it, so `status` explains `busy`.
                    found.add(new LockStatus("<unreadable entry " + file + ": " + seen.problem() + ">",
                            LockStatus.State.UNKNOWN, Optional.empty(), -1));
                }
            }
        } catch (IOException e) {
            throw LockFile.failure("cannot list " + directory, e);
        }
        return found;
    }

    @Override
    public LockStatus breakLock(String name, boolean force) {
        String stem = stem(name, "L");
        Path entry = strategy.entry(directory, stem);
        long giveUpAt = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(5);
        try {
            while (true) {
                Observed seen = strategy.read(entry);
                LockStatus before = statusOf(name, stem, seen);
                switch (seen.state()) {
                    case ABSENT:
                        return before;
                    case FOREIGN:
                        throw new LockBackendException("lock entry " + entry + " is " + seen.problem()
                                + "; kanuki never follows or deletes such entries",
                                "if you did not create it, inspect it and remove it by hand", null);
                    default:
                        break;
                }
                long grace = UNREADABLE_GRACE_MS;
                if (!force && !isStale(seen, grace)) {
                    throw new IllegalStateException(seen.state() == Observed.State.VALID
                            ? "lock '" + SafeNames.printable(name) + "' is live ("
                                    + before.owner().map(OwnerInfo::describe).orElse("owner unknown")
                                    + "); use --force to break it anyway"
                            : "lock '" + SafeNames.printable(name) + "' has an unreadable record (" + seen.problem()
                                    + "): damaged, or still being written; it can be broken without --force once"
                                    + " it has not changed for 30s");
                }
                switch (breakStale(stem, entry, seen, 0, force)) {
                    case REMOVED:
                        return before;
                    case ALREADY_GONE:
                        return new LockStatus(name, LockStatus.State.FREE, Optional.empty(), before.lastFencingToken());
                    default:
                        // BUSY (another breaker at work) or CHANGED (a new owner): look again
                        if (System.nanoTime() > giveUpAt) {
                            throw new IllegalStateException("lock '" + SafeNames.printable(name)
                                    + "' kept changing hands or another breaker held it for 5s; look again");
                        }
                        Thread.sleep(20);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while breaking lock '" + SafeNames.printable(name) + "'", e);
        } catch (IOException e) {
            throw LockFile.failure("cannot break lock '" + SafeNames.printable(name) + "' in " + directory, e);
        }
    }

    /**
     * Removes stale entries (the stale rules; an unreadable entry once it has not changed for
     * 30 s) with {@link #breakStale}, breakers whose holder died, the strategy's own leftovers
     * (see {@link EntryStrategy#pruneLeftover}), and temporary names a process died between
     * making and renaming. A live entry, or one taken afresh while this runs, is never removed;
     * a foreign file (not a name kanuki makes, or not the kind of file it makes) is never touched.
     */
    @Override
    public List<String> prune(boolean dryRun) {
        List<String> removed = new ArrayList<>();
        String suffix = strategy.entry(directory, "x").getFileName().toString().substring(1);
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
            for (Path path : entries) {
                String file = path.getFileName().toString();
                if (pruneOne(path, file, suffix, dryRun)) {
                    removed.add(path.toString());
                }
            }
        } catch (IOException e) {
            throw LockFile.failure("cannot prune " + directory, e);
        }
        return removed;
    }

    private boolean pruneOne(Path path, String file, String suffix, boolean dryRun) throws IOException {
        try {
            if (file.endsWith(suffix)) {
                String stem = file.substring(0, file.length() - suffix.length());
                Observed seen = strategy.read(path);
                if (seen.state() == Observed.State.ABSENT || seen.state() == Observed.State.FOREIGN
                        || !isStale(seen, UNREADABLE_GRACE_MS)) {
                    return false;
                }
                return dryRun || breakStale(stem, path, seen, UNREADABLE_GRACE_MS, false) == BreakResult.REMOVED;
            }
            if (file.endsWith(".breaker")) {
                return BreakerLock.clearIfStale(directory, file.substring(0, file.length() - ".breaker".length()), dryRun);
            }
            if (strategy.pruneLeftover(path, dryRun)) {
                return true;
            }
            return pruneTemporary(path, file, dryRun);
        } catch (LockBackendException foreign) {
            log.debug("prune leaves {} alone: {}", path, foreign.getMessage());
            return false;
        }
    }

    /** A temporary file, link or {@code mkdir} trash directory a process died between making and renaming. */
    static boolean pruneTemporary(Path path, String file, boolean dryRun) throws IOException {
        boolean temp = file.contains(".tmp.");
        boolean trash = file.contains(".lockdir.removed.");
        if (!temp && !trash) {
            return false;
        }
        java.nio.file.attribute.BasicFileAttributes attrs = EntryFiles.attributes(path);
        boolean kind = trash ? attrs != null && attrs.isDirectory()
                : attrs != null && (attrs.isRegularFile() || attrs.isSymbolicLink());
        if (!kind || EntryFiles.ageMillis(path) < LEFTOVER_AGE_MS) {
            return false;
        }
        if (dryRun) {
            return true;
        }
        if (trash) {
            try (DirectoryStream<Path> children = Files.newDirectoryStream(path)) {
                for (Path child : children) {
                    if (SafeFiles.checkRegular("removed lock's file", child, false) != null) {
                        Files.deleteIfExists(child);
                    }
                }
            }
        }
        return Files.deleteIfExists(path);
    }

    @Override
    public void close() {
        // nothing open between calls
    }
}
