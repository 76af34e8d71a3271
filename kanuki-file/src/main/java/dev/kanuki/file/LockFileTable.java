package dev.kanuki.file;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JVM-wide table of open lock files, per directory. Every backend on the same directory
 * shares it, so that the JVM has one channel per lock file (see {@link LockFile} for why two
 * would be dangerous). Channels are closed when the last backend on the directory closes.
 *
 * <p>It also keeps the files of recently released names ({@link DirectoryFiles#released}): at
 * most {@value #MAX_KEPT} per directory per JVM, each for {@value #IDLE_MILLIS} ms after its last
 * use. Taking a kept name again is the lock, the identity check and the record; a new file costs
 * a create, opens and stats, a move of the directory's fencing counter, and at removal a lock, a
 * stat and an unlink (about 20 syscalls instead of 5). The bounds keep the promise that a lock
 * directory stays small: at most {@value #MAX_KEPT} files of free names per running JVM, none
 * once it has been idle a second or has closed its providers.
 *
 * <p>Memory: the table holds an entry (a {@link LockFile}, about 0.4 KB) only for names in use in
 * this JVM (an acquisition, wait or hold) or used in the last {@value #IDLE_MILLIS} ms. The keeper
 * thread forgets the others (it closes their channels and leaves their files on disk), so memory
 * does not grow with the number of distinct names a JVM has ever locked. Forgetting never closes a
 * channel through which this JVM holds or is taking a lock ({@link LockFile#forgetIfIdle}), and a
 * name looked up while its entry is being forgotten gets a new entry, never a second channel
 * beside a live one ({@link LockFile.Retired}).
 */
final class LockFileTable {
    private static final Logger log = LoggerFactory.getLogger(LockFileTable.class);
    /** Kept files of free names per directory per JVM (with the counter's 2 files, ≤ 10 in all). */
    static final int MAX_KEPT = 6;
    /** A kept file unused this long is removed. */
    static final long IDLE_MILLIS = 1000;
    private static final Map<Path, DirectoryFiles> DIRECTORIES = new HashMap<>();

    private LockFileTable() {
    }

    static synchronized DirectoryFiles open(Path directory) {
        DirectoryFiles files = DIRECTORIES.computeIfAbsent(directory, DirectoryFiles::new);
        files.users++;
        return files;
    }

    /** {@return how many lock files the table holds for a directory (for tests)} */
    static synchronized int sizeOf(Path directory) {
        DirectoryFiles files = DIRECTORIES.get(directory);
        return files == null ? 0 : files.size();
    }

    /** {@return how many entries the tables of this JVM have forgotten or removed so far (for tests)} */
    static long retiredSoFar() {
        return RETIRED.get();
    }

    private static final java.util.concurrent.atomic.AtomicLong RETIRED = new java.util.concurrent.atomic.AtomicLong();

    /** The lock files of one directory. */
    static final class DirectoryFiles {
        private final Path directory;
        /** The one LockFile per path: the channel table. */
        private final ConcurrentHashMap<Path, LockFile> files = new ConcurrentHashMap<>();
        /** Lookup cache from lock key to its LockFile (saves hashing the name each time). */
        private final ConcurrentHashMap<String, LockFile> byKey = new ConcurrentHashMap<>();
        private int users;
        /**
         * Guards {@link #kept}, {@link #keeperRunning} and {@link #closed}. A lock, not a monitor:
         * the keeper asks kept files whether they are idle under it, and a file answers only
         * between its file operations ({@link LockFile}), during which a virtual thread releasing
         * a lock must not pin its carrier waiting here (JDK 21 to 23).
         */
        private final ReentrantLock keptLock = new ReentrantLock();
        /** Files of released names, least recently released first; guarded by {@link #keptLock}. */
        private final LinkedHashMap<LockFile, Boolean> kept = new LinkedHashMap<>(16, 0.75f, true);
        /** Whether a keeper thread runs for {@link #kept}; guarded by {@link #keptLock}. */
        private boolean keeperRunning;
        /** Counts {@link #wake} calls, so that the keeper never stops just after one; guarded by {@link #keptLock}. */
        private long wakes;
        private boolean closed;

        private DirectoryFiles(Path directory) {
            this.directory = directory;
        }

        /**
         * Keeps the file of a name just released (instead of removing it at once), removing the
         * least recently released beyond {@link #MAX_KEPT}; a keeper thread removes those left
         * unused for {@link #IDLE_MILLIS}, and ends when none is kept.
         */
        void released(LockFile file) {
            List<LockFile> evicted = null;
            boolean startKeeper = false;
            keptLock.lock();
            try {
                if (closed) {
                    evicted = List.of(file);
                } else if (!file.isRetired()) {
                    kept.put(file, Boolean.TRUE);
                    if (kept.size() > MAX_KEPT) {
                        evicted = new ArrayList<>();
                        Iterator<LockFile> eldest = kept.keySet().iterator();
                        while (kept.size() > MAX_KEPT && eldest.hasNext()) {
                            evicted.add(eldest.next());
                            eldest.remove();
                        }
                    }
                    wakes++;
                    if (!keeperRunning) {
                        keeperRunning = startKeeper = true;
                    }
                }
            } finally {
                keptLock.unlock();
            }
            if (evicted != null) {
                for (LockFile f : evicted) {
                    if (f.removeIfUnused(DirectoryFence.of(directory), log)) {
                        drop(f);
                    } else {
                        // in use (its release keeps it again) or being peeked at: keep it for the keeper
                        keptLock.lock();
                        try {
                            if (!closed) {
                                kept.put(f, Boolean.TRUE);
                            }
                        } finally {
                            keptLock.unlock();
                        }
                    }
                }
            }
            if (startKeeper) {
                startKeeper();
            }
        }

        /** Makes sure the keeper runs: a file became unused, or a new one was made. */
        void wake() {
            boolean start = false;
            keptLock.lock();
            try {
                wakes++;
                if (!closed && !keeperRunning) {
                    keeperRunning = start = true;
                }
            } finally {
                keptLock.unlock();
            }
            if (start) {
                startKeeper();
            }
        }

        private void startKeeper() {
            Thread keeper = new Thread(this::keep, "kanuki-file-keeper");
            keeper.setDaemon(true);
            keeper.setContextClassLoader(null); // holds no application's class loader alive
            keeper.start();
        }

        /** The keeper thread: removes kept files once idle, and ends when none is left. */
        private void keep() {
            long idleNanos = TimeUnit.MILLISECONDS.toNanos(IDLE_MILLIS);
            while (true) {
                try {
                    Thread.sleep(IDLE_MILLIS / 2);
                } catch (InterruptedException e) {
                    // not interrupted by kanuki; go on until nothing is kept
                }
                List<LockFile> idle = new ArrayList<>();
                java.util.Set<LockFile> keptNow;
                long wakesBefore;
                keptLock.lock();
                try {
                    if (closed) {
                        keeperRunning = false;
                        return;
                    }
                    wakesBefore = wakes;
                    keptNow = new java.util.HashSet<>(kept.keySet());
                    for (LockFile f : kept.keySet()) {
                        if (f.idleFor(idleNanos)) {
                            idle.add(f);
                        }
                    }
                } finally {
                    keptLock.unlock();
                }
                for (LockFile f : idle) {
                    if (f.removeIfUnused(DirectoryFence.of(directory), log)) {
                        keptLock.lock();
                        try {
                            kept.remove(f); // retired: it is never taken again (the name gets a new entry)
                        } finally {
                            keptLock.unlock();
                        }
                        drop(f);
                    }
                }
                boolean waiting = forgetUnused(keptNow, idleNanos);
                keptLock.lock();
                try {
                    if (closed || (kept.isEmpty() && !waiting && wakes == wakesBefore)) {
                        keeperRunning = false;
                        return;
                    }
                } finally {
                    keptLock.unlock();
                }
            }
        }

        /**
         * Forgets the files no acquisition of this JVM has used for {@code idleNanos} (their
         * channels closed, their files left on disk), except those kept for reuse.
         *
         * @return true when some unused file is not idle long enough yet (the keeper goes on)
         */
        private boolean forgetUnused(java.util.Set<LockFile> keptNow, long idleNanos) {
            boolean waiting = false;
            DirectoryFence fence = null;
            for (LockFile f : files.values()) {
                if (keptNow.contains(f)) {
                    continue;
                }
                if (!f.isRetired()) {
                    if (fence == null) {
                        fence = DirectoryFence.of(directory);
                    }
                    LockFile.Forget done = f.forgetIfIdle(idleNanos, fence, log);
                    if (done == LockFile.Forget.NOT_YET) {
                        waiting = true;
                    }
                    if (done != LockFile.Forget.FORGOTTEN) {
                        continue;
                    }
                }
                drop(f);
            }
            return waiting;
        }

        /** Drops a retired file from the lookup tables (a new entry may have replaced it already). */
        private void drop(LockFile f) {
            if (f.isRetired()) {
                if (files.remove(f.path, f)) {
                    RETIRED.incrementAndGet();
                }
                String key = f.key;
                if (key != null) {
                    byKey.remove(key, f);
                }
            }
        }

        /** {@return how many lock files the table holds: names in use or used lately} */
        int size() {
            return files.size();
        }

        /**
         * {@return the live LockFile of a name's file} Callers that get a {@link LockFile.Retired}
         * from it (it was forgotten meanwhile) ask again.
         */
        LockFile get(String key, String name, Supplier<String> fileName) {
            LockFile file = byKey.get(key);
            if (file == null || file.isRetired()) {
                if (file != null) {
                    byKey.remove(key, file);
                }
                file = byPath(directory.resolve(fileName.get()));
                file.name(name);
                if (byKey.size() < 10_000) {
                    file.key = key;
                    byKey.put(key, file);
                }
            }
            return file;
        }

        /** {@return the live LockFile of a path (for a listing, its name is read from the file later)} */
        LockFile byPath(Path path) {
            LockFile file = files.get(path);
            if (file != null && !file.isRetired()) {
                return file;
            }
            LockFile[] made = new LockFile[1];
            // One live object per path: a retired one (its channel closed for good) is replaced.
            file = files.compute(path, (p, old) -> old != null && !old.isRetired() ? old
                    : (made[0] = new LockFile(p, this::wake)));
            if (made[0] != null) {
                wake(); // the keeper forgets it once unused
            }
            return file;
        }

        /** Drops one user; the last one closes every channel (no lock is held through them by then). */
        void close() {
            synchronized (LockFileTable.class) {
                if (--users > 0) {
                    return;
                }
                DIRECTORIES.remove(directory);
            }
            List<LockFile> left;
            keptLock.lock();
            try {
                closed = true;
                left = new ArrayList<>(kept.keySet());
                kept.clear();
            } finally {
                keptLock.unlock();
            }
            // no lock is held through this table any more: remove what was kept for reuse
            left.forEach(f -> f.removeIfUnused(DirectoryFence.of(directory), log));
            files.values().forEach(LockFile::closeQuietly);
            files.clear();
            byKey.clear();
        }
    }
}
