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
import java.nio.file.NoSuchFileException;
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
            .crossProcess().semaphores().persistentFencing().ownerRecords().keepsStale().build();
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
    /** {@code keepStale=true}: acquirers leave stale entries for a person to inspect and break. */
    private final boolean keepStale;

    TtlFileLockBackend(Path directory, EntryStrategy strategy) {
        this(directory, strategy, false);
    }

    TtlFileLockBackend(Path directory, EntryStrategy strategy, boolean keepStale) {
        this.directory = directory;
        this.strategy = strategy;
        this.keepStale = keepStale;
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
                KeptStale.Refusal keptStale = null;
                for (int slot = 0; slot < request.permits(); slot++) {
                    try {
                        Optional<Grant> grant = attempt(stem(request.name(), "S" + slot), request);
                        if (grant.isPresent()) {
                            return grant;
                        }
                    } catch (KeptStale.Refusal e) {
                        keptStale = e; // another permit may be free
                    }
                }
                if (keptStale != null) {
                    throw keptStale;
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
                    // Our entry is broken only once its lease has run out (a bare one: once it is
                    // a lease old, which is later): while it has not, the rewrite below lands on
                    // our own entry. Past it, the entry may be someone else's by now: nothing is
                    // written and nothing undone (that could remove theirs); ours is stale anyway.
                    if (System.currentTimeMillis() >= mine.leaseUntilMillis()) {
                        return Optional.empty();
                    }
                    strategy.rewrite(entry, mine); // the token in the record, for status
                    check = strategy.read(entry);
                } catch (IOException | RuntimeException | Error e) {
                    if (System.currentTimeMillis() < mine.leaseUntilMillis()) {
                        undo(entry, mine, bare);
                    }
                    throw e;
                }
                // Confirmed by reading it back, and by the clock: a record that landed after our
                // lease ran out may have landed on a newer holder's entry (see renew).
                if (check.state() == Observed.State.VALID && check.record().id().equals(mine.id())
                        && System.currentTimeMillis() < mine.leaseUntilMillis()) {
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
                    if (keepStale) {
                        throw KeptStale.failure(directory, strategy.name(), request.name(), seen);
                    }
                    BreakResult broken = breakStale(stem, entry, seen, leaseMillis, BreakerLock.ttlFor(leaseMillis), false);
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
     * <p>The breaker has a lease of its own ({@code breakerMillis}; for an acquirer half the
     * lock's lease, see {@link BreakerLock#ttlFor}), after which others clear it: a breaker
     * frozen here delays them that long at most. One that resumes after that removes nothing
     * ({@link BreakerLock#isStillOurs}): the entry it saw stale may have been broken by another
     * and taken afresh meanwhile.
     *
     * @param breakerMillis the breaker's lease
     * @param force remove it even if it is live (only {@code kanuki break --force})
     */
    BreakResult breakStale(String stem, Path entry, Observed seen, long graceMillis, long breakerMillis, boolean force)
            throws IOException {
        try (BreakerLock breaker = BreakerLock.tryTake(directory, stem, breakerMillis)) {
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
            if (!breaker.isStillOurs()) {
                return BreakResult.BUSY; // frozen past the breaker's lease: another may have broken it and a new owner taken it
            }
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
     * Renews without the breaker lock, so that a holder paused in the middle of renewing keeps
     * nobody out beyond its lease (under the breaker it kept everyone out until the breaker's
     * own 10 s ran out). What the breaker gave, "nobody breaks the entry between my check and my
     * rewrite", is given by the clock instead: the entry is only broken once it is stale, i.e.
     * once its lease ({@code until}) has run out. The rewrite is made only while {@code until}
     * is still ahead, and it counts only when {@code until} is still ahead once the new record is
     * in place: then no breaker can have seen the entry stale before the new lease was visible
     * (it would have had to look after {@code until}), so the entry was neither broken nor taken
     * by someone else. A renewer frozen past its lease finds out here that it lost the lock. (A
     * freeze of longer than the lease exactly between the last check and the rewrite writes our
     * record over a new holder's: that holder then finds at its next renewal that it lost the
     * lock, and we report ours lost, so still nobody holds it twice.)
     */
    @Override
    public boolean renew(Grant grant, Duration lease) {
        TtlGrant g = (TtlGrant) grant;
        try {
            Observed now = strategy.read(g.entry);
            if (now.state() != Observed.State.VALID || !now.record().id().equals(g.record.id())) {
                return false; // broken or taken over
            }
            long until = now.record().leaseUntilMillis();
            PauseForTests.at("renew");
            if (System.currentTimeMillis() >= until) {
                return false; // ran out while we were away: a breaker may be removing it right now
            }
            TtlRecord renewed = g.record.withLeaseUntil(System.currentTimeMillis() + lease.toMillis());
            strategy.rewrite(g.entry, renewed);
            if (System.currentTimeMillis() >= until) {
                log.warn("renewal of {} landed after its lease ran out; reporting the lock lost", g.entry);
                return false;
            }
            g.record = renewed;
            return true;
        } catch (NoSuchFileException e) {
            return false; // the entry was removed under us (mkdir: its directory is gone)
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

    /**
     * Removes the entry if it is still ours and its lease is not about to run out. Done even
     * when the calling thread is interrupted ({@link Uninterruptible}): an interrupt would close
     * the channel of a read and leave the entry until its lease runs out.
     */
    @Override
    public void release(Grant grant) {
        TtlGrant g = (TtlGrant) grant;
        try {
            Uninterruptible.run(() -> {
                releaseNow(g);
                return null;
            });
        } catch (IOException e) {
            log.warn("releasing {} failed; it frees when its lease runs out", g.entry, e);
        }
    }

    private void releaseNow(TtlGrant g) throws IOException {
        Observed now = strategy.read(g.entry);
        boolean mine = now.state() == Observed.State.VALID && now.record().id().equals(g.record.id());
        if (!mine) {
            return; // broken or taken over: nothing of ours to remove
        }
        PauseForTests.at("release");
        // Checked last, right before the removal: past our lease the entry may be a new holder's
        // by now (ours broken as stale, theirs created), so a release frozen until then removes
        // nothing. So close to expiry that a breaker may be removing it right now: let it expire.
        if (now.record().leaseUntilMillis() - System.currentTimeMillis() < RELEASE_MARGIN_MS) {
            log.warn("lease of {} ran out before release; leaving it to expire", g.entry);
            return;
        }
        strategy.remove(g.entry);
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
                switch (breakStale(stem, entry, seen, 0, BreakerLock.TTL_MS, force)) {
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
                return dryRun || breakStale(stem, path, seen, UNREADABLE_GRACE_MS, BreakerLock.TTL_MS, false) == BreakResult.REMOVED;
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
