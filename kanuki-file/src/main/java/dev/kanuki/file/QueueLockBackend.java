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
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code file:DIR?strategy=queue}: an append-only arrival queue per name. Contenders append an arrival line to
 * {@code STEM.queue}; the first live contender holds the lock (see {@link QueueLog}). Waiters keep
 * their place between attempts, so service is first come, first served across processes.
 *
 * <p>Holding is always confirmed by reading the queue again after the fencing token is taken,
 * and {@link #verify} reads the queue again. The file is compacted (dead
 * events dropped, live contenders kept in order) under the breaker lock once it grows past
 * {@link #COMPACT_AT} bytes; a contender that appended to the file being replaced notices that
 * the file changed under it and appends again.
 */
final class QueueLockBackend implements LockBackend {
    private static final Logger log = LoggerFactory.getLogger(QueueLockBackend.class);
    private static final Capabilities CAPABILITIES = Capabilities.builder(LeaseKind.TTL)
            .crossProcess().persistentFencing().ownerRecords().build();
    static final int COMPACT_AT = 4 * 1024;
    private static final int MAX_QUEUE_BYTES = 16 * 1024 * 1024;

    private final Path directory;
    /** At most this many names' stems are cached ({@link #stem}). */
    static final int STEMS_REMEMBERED = 10_000;
    private final ConcurrentHashMap<String, String> stems = new ConcurrentHashMap<>();
    /**
     * Owner ids this backend has appended an arrival for and not yet removed: a request not in
     * here has no line yet, so its first attempt appends without reading the queue first. Never
     * trimmed (forgetting a waiter would make it arrive again, at the back); every request the
     * engine stops pursuing is released or abandoned, which removes it.
     */
    private final Set<String> arrived = ConcurrentHashMap.newKeySet();
    /**
     * How many places from the head of the queue a waiter must be to be woken by a change of the
     * queue file. A waiter further back can only be served after those ahead of it leave, and
     * retries (refreshing its place) on the engine's timer, once a second; waking it on every
     * arrival, renewal and removal of 200 other processes made each of them read the whole queue
     * hundreds of times a second, and the queue served a quarter of them in two minutes.
     */
    static final int WOKEN_PLACES = 4;
    /** Each waiting request's place in its queue at its last attempt, by owner id. */
    private final ConcurrentHashMap<String, Place> places = new ConcurrentHashMap<>();
    /** How long a waiter at place p leaves between reads of the queue: p times this, at most a second. */
    static final long PACE_PER_PLACE_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(20);

    /** A waiter's place in its queue ({@code ahead} live contenders before it) as read at {@code readAtNanos}. */
    private record Place(int ahead, long readAtNanos) {
        boolean nearTheHead() {
            return ahead < WOKEN_PLACES;
        }

        /**
         * Whether a waiter this far back read the queue so recently that reading it again is
         * pointless: it cannot be served before those ahead of it leave. Where the directory
         * cannot be watched (a network file system, or no inotify instance left: 128 per user
         * by default, one per JVM and directory) waiters poll every few milliseconds, and 200 of
         * them each reading a queue of 200 lines would take the machine. At most a quarter of the
         * lease, so that the waiter's line is renewed in time.
         */
        boolean recentlyRead(long now, Duration lease) {
            long pace = Math.min(Math.min(1_000_000_000L, lease.toNanos() / 4), ahead * PACE_PER_PLACE_NANOS);
            return !nearTheHead() && now - readAtNanos < pace;
        }
    }

    QueueLockBackend(Path directory) {
        this.directory = directory;
    }

    /** A held place at the head of the queue. */
    record QueueGrant(String stem, String id, long fencingToken) implements Grant {
    }

    /**
     * The queue file as read at one moment.
     *
     * @param seen the look at the path made after reading it (null when absent): the look before
     *     the next open of the same call
     */
    private record Snapshot(String text, Object fileKey, long size, SafeFiles.Seen seen) {
        static final Snapshot ABSENT = new Snapshot("", null, 0, null);
    }

    @Override
    public Capabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public String scope() {
        return "file:" + directory + "?strategy=queue";
    }

    /**
     * A cache of file stems by name (a stem costs a hash): bounded, so that memory does not grow
     * with the number of distinct names; a name past the bound is hashed each time.
     */
    private String stem(String name) {
        String stem = stems.get(name);
        if (stem == null) {
            stem = SafeNames.stem(name, "L");
            if (stems.size() < STEMS_REMEMBERED) {
                stems.put(name, stem);
            }
        }
        return stem;
    }

    private Path queue(String stem) {
        return directory.resolve(stem + ".queue");
    }

    @Override
    public Optional<Grant> tryAcquire(LockRequest request) {
        if (request.mode() != LockMode.EXCLUSIVE) {
            throw new UnsupportedOperationException("strategy queue has exclusive locks only");
        }
        String stem = stem(request.name());
        Path queue = queue(stem);
        String id = request.owner().id();
        long leaseMillis = request.lease().toMillis();
        Place place = places.get(id);
        if (place != null && place.recentlyRead(System.nanoTime(), request.lease()) && arrived.contains(id)) {
            return Optional.empty();
        }
        try {
            Snapshot snapshot = null;
            QueueLog log = null;
            long now = System.currentTimeMillis();
            QueueLog.Contender mine = null;
            if (arrived.contains(id)) { // a later attempt: our line may need renewing, or may have been compacted away
                snapshot = read(queue, null);
                log = QueueLog.replay(snapshot.text());
                mine = log.get(id);
            }
            if (mine != null && mine.leaseUntil <= now) {
                // Our line ran out while we were away (a pause) and others went past it; renewing
                // it could bring it back to life ahead of whoever holds now: arrive again, at the back.
                mine = null;
            }
            if (mine == null) {
                arrived.add(id);
                String arrival = arrival(request, now);
                // The read right after shows whether the line landed (it is lost when a compaction
                // replaced the file under the append): no look after the write, and when it is
                // missing it is appended again at once.
                SafeFiles.Seen known = null;
                for (int round = 0; ; round++) {
                    snapshot = read(queue, append(queue, arrival, known, false));
                    log = QueueLog.replay(snapshot.text());
                    if (log.get(id) != null) {
                        break;
                    }
                    if (round >= 4) {
                        return Optional.empty(); // compacted under every append: the next attempt appends again
                    }
                    known = snapshot.seen();
                }
            } else if (mine.leaseUntil - now < leaseMillis / 2) {
                // keep our place while we wait; nothing reads it back, so the append checks it landed
                append(queue, QueueLog.renewal(id, now + leaseMillis), snapshot.seen(), true);
                if (System.currentTimeMillis() >= mine.leaseUntil) {
                    // It landed after our line ran out (paused in between): it may have brought a
                    // dead line back ahead of a new holder. To the back of the queue instead.
                    append(queue, arrival(request, System.currentTimeMillis()), null, true);
                    return Optional.empty();
                }
            }
            QueueLog.Contender holder = log.holder(System.currentTimeMillis());
            if (holder == null || !holder.record.id().equals(id)) {
                places.put(id, new Place(log.place(id, System.currentTimeMillis()), System.nanoTime()));
                compactIfLarge(stem, snapshot);
                return Optional.empty();
            }
            PauseForTests.at("acquire");
            long token = DirectoryFence.of(directory).next();
            Snapshot again = read(queue, snapshot.seen());
            QueueLog.Contender still = QueueLog.replay(again.text()).holder(System.currentTimeMillis());
            // The file can be gone for a moment (a compaction that removed it is forwarding our line
            // to a new one): not ours yet, the next attempt sees the new file.
            if (again.fileKey() == null || !again.fileKey().equals(snapshot.fileKey()) || still == null
                    || !still.record.id().equals(id)) {
                return Optional.empty();
            }
            places.remove(id);
            // For status; a lost one only hides the token there, so no look after the write.
            append(queue, QueueLog.token(id, token), again.seen(), false);
            return Optional.of(new QueueGrant(stem, id, token));
        } catch (IOException e) {
            throw LockFile.failure("cannot use queue " + queue, e);
        }
    }

    private static String arrival(LockRequest request, long now) {
        OwnerInfo owner = request.owner();
        return QueueLog.arrival(new TtlRecord(owner.id(), owner.pid(), now, now + request.lease().toMillis(), owner.host(),
                request.name()));
    }

    /**
     * Calls {@code onChange} when the queue file is appended to, replaced or removed (a holder
     * left, a contender arrived), from the kernel's notifications, while the waiter is among the
     * first {@link #WOKEN_PLACES} of the queue (see there); null where the directory cannot
     * be watched (a network file system), so the waiter keeps polling.
     */
    @Override
    public dev.kanuki.spi.ChangeSubscription watchChanges(LockRequest request, Runnable onChange) {
        DirectoryWatcher watcher = DirectoryWatcher.of(directory);
        String id = request.owner().id();
        Runnable nearTheHead = () -> {
            Place place = places.get(id);
            if (place == null || place.nearTheHead()) {
                onChange.run();
            }
        };
        return watcher == null ? null
                : watcher.subscribe(List.of(queue(stem(request.name())).getFileName().toString()), nearTheHead);
    }

    /**
     * Appends a renewal of our line, by the same rule as the ttl strategies' renewal (see
     * {@code TtlFileLockBackend.renew}): only while our lease has not run out, and it counts only
     * if it still has not once the renewal is in the file. A renewal appended after our line ran
     * out would bring it back to life ahead of the contender that took over meanwhile; a holder
     * frozen inside renewal finds out here that it lost the lock. When the renewal landed too
     * late we append our removal, so that our line does not stand in front of the new holder.
     */
    @Override
    public boolean renew(Grant grant, Duration lease) {
        QueueGrant g = (QueueGrant) grant;
        Path queue = queue(g.stem());
        try {
            QueueLog.Contender me = holderLine(g);
            if (me == null) {
                return false;
            }
            long until = me.leaseUntil;
            PauseForTests.at("renew");
            if (System.currentTimeMillis() >= until) {
                return false;
            }
            long renewed = System.currentTimeMillis() + lease.toMillis();
            Snapshot seen = appendUntilSeen(queue, QueueLog.renewal(g.id(), renewed), log -> {
                QueueLog.Contender c = log.get(g.id());
                return c == null || c.leaseUntil >= renewed;
            }, true);
            if (System.currentTimeMillis() >= until) {
                log.warn("renewal in {} landed after the lease ran out; leaving the queue, the lock is lost", queue);
                appendUntilSeen(queue, QueueLog.removal(g.id()), log -> log.get(g.id()) == null, false);
                return false;
            }
            return seen != null && holderLine(g) != null;
        } catch (IOException e) {
            throw LockFile.failure("cannot renew in queue " + queue, e);
        }
    }

    @Override
    public boolean verify(Grant grant) {
        try {
            return isHolder((QueueGrant) grant);
        } catch (IOException e) {
            throw LockFile.failure("cannot read queue " + queue(((QueueGrant) grant).stem()), e);
        }
    }

    private boolean isHolder(QueueGrant g) throws IOException {
        return holderLine(g) != null;
    }

    /** {@return our line when it holds the lock, else null} */
    private QueueLog.Contender holderLine(QueueGrant g) throws IOException {
        QueueLog.Contender holder = QueueLog.replay(read(queue(g.stem()), null).text()).holder(System.currentTimeMillis());
        return holder != null && holder.record.id().equals(g.id()) ? holder : null;
    }

    @Override
    public void release(Grant grant) {
        QueueGrant g = (QueueGrant) grant;
        leave(g.stem(), g.id());
    }

    @Override
    public void abandon(LockRequest request) {
        leave(stem(request.name()), request.owner().id());
    }

    /**
     * Appends our removal and confirms it, even when the calling thread is interrupted (an
     * interrupted waiter gives up its place this way): through {@link Uninterruptible}, since
     * an interrupt closes the queue file's channel and the removal would be lost, keeping the
     * next contender waiting for our whole lease.
     */
    private void leave(String stem, String id) {
        Path queue = queue(stem);
        try {
            Uninterruptible.run(() -> {
                leaveNow(stem, id);
                return null;
            });
        } catch (IOException | RuntimeException e) {
            log.warn("leaving queue {} failed; the place frees when its lease runs out", queue, e);
        }
    }

    private void leaveNow(String stem, String id) throws IOException {
        Path queue = queue(stem);
        // Our line is live (we hold or wait): append the removal at once, then confirm it.
        places.remove(id);
        PauseForTests.at("release");
        Snapshot after = appendUntilSeen(queue, QueueLog.removal(id), log -> log.get(id) == null, false);
        arrived.remove(id);
        if (after == null) {
            log.warn("leaving queue {}: the removal was not seen after six appends (the file kept being replaced);"
                    + " the place frees when its lease runs out", queue);
        }
        if (after != null && QueueLog.replay(after.text()).holder(System.currentTimeMillis()) == null) {
            compact(stem, after.seen()); // nobody left: the file goes, so a name nobody holds leaves nothing
        } else {
            compactIfLarge(stem, after);
        }
    }

    /**
     * Rewrites a large queue with only its live contenders, in order, under the breaker. Lines
     * appended to the old file while it is being replaced are forwarded to the new one after the
     * rename (read through a descriptor kept on the old file), so a removal or renewal cannot be
     * lost and a contender that left cannot come back to life; an append that lands even later
     * is seen missing by its writer, which appends it again ({@link #appendUntilSeen}).
     */
    private void compactIfLarge(String stem, Snapshot seen) throws IOException {
        if (seen == null || seen.size() < COMPACT_AT) {
            return;
        }
        // Only when at least half the file is dead lines: a long queue of live contenders is not
        // shortened by compacting, and compacting it on every attempt (each a rename that wakes
        // every watching waiter) would only add work.
        long live = 0;
        long now = System.currentTimeMillis();
        for (QueueLog.Contender c : QueueLog.replay(seen.text()).contenders()) {
            if (c.isLive(now)) {
                live += QueueLog.arrival(c.record).length() + 64;
            }
        }
        if (seen.size() >= 2 * live) {
            compact(stem, null);
        }
    }

    /**
     * Compaction proper; a queue left with no live contender is removed instead of rewritten
     * (lines appended to it meanwhile are forwarded the same way, which makes it again).
     */
    private void compact(String stem, SafeFiles.Seen seen) throws IOException {
        Path queue = queue(stem);
        try (BreakerLock breaker = BreakerLock.tryTake(directory, stem)) {
            if (breaker == null) {
                return;
            }
            try (FileChannel old = SafeFiles.openExistingWithKey("queue file", queue, false, seen).channel()) {
                ByteBuffer before = ByteBuffer.allocate((int) Math.min(MAX_QUEUE_BYTES, old.size() + 4096));
                while (before.hasRemaining() && old.read(before) > 0) {
                    // read it all (a regular file, checked when opened)
                }
                long now = System.currentTimeMillis();
                StringBuilder kept = new StringBuilder();
                String text = new String(before.array(), 0, before.position(), StandardCharsets.UTF_8);
                for (QueueLog.Contender c : QueueLog.replay(text).contenders()) {
                    if (c.isLive(now)) {
                        kept.append(QueueLog.arrival(c.record.withLeaseUntil(c.leaseUntil)));
                        if (c.token > 0) {
                            kept.append(QueueLog.token(c.record.id(), c.token));
                        }
                    }
                }
                if (!breaker.isStillOurs()) {
                    // Frozen past the breaker's lease: another compaction may have replaced the file
                    // meanwhile, and ours (read before) would bring back lines that have left since.
                    return;
                }
                if (kept.length() == 0) {
                    Files.deleteIfExists(queue); // every replacement happens under the breaker we hold
                } else {
                    Path temp = directory.resolve(stem + ".queue.tmp." + dev.kanuki.spi.ProcessIdentity.randomId());
                    try {
                        Files.writeString(temp, kept, StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW,
                                StandardOpenOption.WRITE);
                        Files.move(temp, queue, StandardCopyOption.ATOMIC_MOVE);
                    } finally {
                        Files.deleteIfExists(temp);
                    }
                }
                // Whatever was appended to the old file after our read: usually nothing, so the
                // buffer starts small (a 64 KiB one, zeroed at every release, cost more than the
                // rest of the release's own work).
                ByteBuffer late = ByteBuffer.allocate(4096);
                while (old.read(late) > 0) {
                    if (!late.hasRemaining()) {
                        if (late.capacity() >= MAX_QUEUE_BYTES) {
                            break;
                        }
                        ByteBuffer larger = ByteBuffer.allocate(2 * late.capacity());
                        late.flip();
                        late = larger.put(late);
                    }
                }
                if (late.position() > 0) {
                    append(queue, new String(late.array(), 0, late.position(), StandardCharsets.UTF_8), null, true);
                }
            } catch (NoSuchFileException e) {
                // removed meanwhile: nothing to compact
            }
        }
    }

    /** @param known a look at the queue made a moment ago by the same call, or null (see {@link SafeFiles#readRegular}) */
    private Snapshot read(Path queue, SafeFiles.Seen known) throws IOException {
        SafeFiles.Content content = SafeFiles.readRegular("queue file", queue, 2048, MAX_QUEUE_BYTES, known);
        if (content == null) {
            return Snapshot.ABSENT;
        }
        if (content.cut()) {
            throw new LockBackendException("queue file " + queue + " is more than " + MAX_QUEUE_BYTES
                    + " bytes, far more than kanuki writes",
                    "something else is writing to it; remove it when no process uses the lock", null);
        }
        ByteBuffer data = content.data();
        return new Snapshot(new String(data.array(), 0, data.limit(), StandardCharsets.UTF_8), content.fileKey(),
                data.limit(), content.seen());
    }

    /**
     * Appends a line unless the queue already shows its effect, and checks that it landed: an
     * append that raced a compaction went to the file being replaced and is lost, so it is made
     * again. A lost removal would otherwise leave a live-looking line of a process that no longer
     * waits, blocking the queue for a whole lease.
     *
     * @param lookFirst whether to read before the first append (false when the effect cannot be
     *     there yet: one read saved)
     * @return the queue as read with the effect visible, or null when it never became visible
     */
    private Snapshot appendUntilSeen(Path queue, String line, java.util.function.Predicate<QueueLog> landed,
                                     boolean lookFirst) throws IOException {
        // Each append is followed by a read that shows whether it landed: no look after the write.
        SafeFiles.Seen look = lookFirst ? null : append(queue, line, null, false);
        for (int round = 0; round < 5; round++) {
            Snapshot seen = read(queue, look);
            if (landed.test(QueueLog.replay(seen.text()))) {
                return seen;
            }
            look = append(queue, line, seen.seen(), false);
        }
        Snapshot seen = read(queue, look);
        return landed.test(QueueLog.replay(seen.text())) ? seen : null;
    }

    /**
     * Appends one whole line (O_APPEND makes concurrent appends land one after another). A
     * compaction replaces (or removes) the file under its breaker lock and forwards what was
     * appended to the old file while it worked; a line written to the old file after that is
     * lost with it. With {@code confirm}, the appender checks after writing that the path still
     * names the file it wrote to, and writes the line again to the new one when not (a line read
     * twice is harmless: an arrival or removal is recorded once per contender). Without it the
     * caller reads the queue next and sees whether the line is there.
     *
     * @param known a look at the queue made a moment ago by the same call, or null
     * @return the look made after opening (with {@code confirm}: after writing), for the caller's next open
     */
    private static SafeFiles.Seen append(Path queue, String line, SafeFiles.Seen known, boolean confirm)
            throws IOException {
        byte[] bytes = line.getBytes(StandardCharsets.UTF_8);
        for (int round = 0; round < 1000; round++) {
            SafeFiles.Opened opened = SafeFiles.openOrCreate("queue file", queue, true, round == 0 ? known : null);
            try (FileChannel channel = opened.channel()) {
                ByteBuffer data = ByteBuffer.wrap(bytes);
                int n = channel.write(data);
                if (data.hasRemaining()) {
                    throw new IOException("short append to " + queue + " (" + n + " bytes)");
                }
            }
            if (!confirm) {
                return opened.seen();
            }
            SafeFiles.Seen now = SafeFiles.lookWithLinks(queue);
            if (opened.fileKey() != null && now != null && opened.fileKey().equals(now.attrs().fileKey())) {
                return now;
            }
        }
        throw new LockBackendException("queue file " + queue + " keeps being replaced while a line is appended",
                "something else is creating or removing files in the lock directory; stop it", null);
    }

    @Override
    public LockStatus status(String name) {
        String stem = stem(name);
        try {
            return statusOf(name, stem, QueueLog.replay(read(queue(stem), null).text()));
        } catch (IOException e) {
            throw LockFile.failure("cannot read queue " + queue(stem), e);
        }
    }

    private LockStatus statusOf(String name, String stem, QueueLog log) {
        long now = System.currentTimeMillis();
        QueueLog.Contender holder = log.holder(now);
        long token = holder != null && holder.token > 0 ? holder.token : -1;
        if (holder != null) {
            return new LockStatus(name, LockStatus.State.HELD, Optional.of(holder.record.withLeaseUntil(holder.leaseUntil).owner()), token);
        }
        List<QueueLog.Contender> left = log.contenders();
        if (!left.isEmpty()) {
            QueueLog.Contender first = left.get(0);
            return new LockStatus(name, LockStatus.State.STALE, Optional.of(first.record.withLeaseUntil(first.leaseUntil).owner()), token);
        }
        return new LockStatus(name, LockStatus.State.FREE, Optional.empty(), token);
    }

    @Override
    public List<LockStatus> list() {
        List<LockStatus> found = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory, "*.queue")) {
            for (Path entry : entries) {
                QueueLog log = QueueLog.replay(read(entry, null).text());
                List<QueueLog.Contender> all = log.contenders();
                if (!all.isEmpty()) {
                    String file = entry.getFileName().toString();
                    found.add(statusOf(all.get(0).record.lockName(), file.substring(0, file.length() - ".queue".length()), log));
                }
            }
        } catch (IOException e) {
            throw LockFile.failure("cannot list " + directory, e);
        }
        return found;
    }

    @Override
    public LockStatus breakLock(String name, boolean force) {
        String stem = stem(name);
        Path queue = queue(stem);
        try {
            QueueLog log = QueueLog.replay(read(queue, null).text());
            LockStatus before = statusOf(name, stem, log);
            long now = System.currentTimeMillis();
            if (before.state() == LockStatus.State.HELD && !force) {
                throw new IllegalStateException("lock '" + SafeNames.printable(name) + "' is live ("
                        + before.owner().map(OwnerInfo::describe).orElse("owner unknown") + "); use --force to break it anyway");
            }
            // Stale contenders are skipped by everyone already; removing them just tidies the file.
            for (QueueLog.Contender c : log.contenders()) {
                if (!c.isLive(now) || (force && c == log.holder(now))) {
                    append(queue, QueueLog.removal(c.record.id()), null, true);
                }
            }
            return before;
        } catch (IOException e) {
            throw LockFile.failure("cannot break lock in queue " + queue, e);
        }
    }

    /**
     * Removes queue files with no live contender (every line's process died or its lease ran
     * out) the way the last contender to leave removes it: a compaction under the breaker lock,
     * which forwards lines appended meanwhile (an arrival makes the file again). Also stale
     * breakers and temporary files a process died between making and renaming.
     */
    @Override
    public List<String> prune(boolean dryRun) {
        List<String> removed = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
            for (Path path : entries) {
                String file = path.getFileName().toString();
                try {
                    if (file.endsWith(".queue") ? pruneQueue(path, file, dryRun)
                            : file.endsWith(".breaker")
                                    ? BreakerLock.clearIfStale(directory, file.substring(0, file.length() - ".breaker".length()), dryRun)
                                    : TtlFileLockBackend.pruneTemporary(path, file, dryRun)) {
                        removed.add(path.toString());
                    }
                } catch (LockBackendException foreign) {
                    log.debug("prune leaves {} alone: {}", path, foreign.getMessage());
                }
            }
        } catch (IOException e) {
            throw LockFile.failure("cannot prune " + directory, e);
        }
        return removed;
    }

    private boolean pruneQueue(Path queue, String file, boolean dryRun) throws IOException {
        if (QueueLog.replay(read(queue, null).text()).holder(System.currentTimeMillis()) != null) {
            return false;
        }
        if (dryRun) {
            return true;
        }
        compact(file.substring(0, file.length() - ".queue".length()), null);
        return EntryFiles.attributes(queue) == null;
    }

    @Override
    public void close() {
        // nothing open between calls
    }
}
