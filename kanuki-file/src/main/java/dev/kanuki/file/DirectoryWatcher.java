package dev.kanuki.file;

import dev.kanuki.spi.ChangeSubscription;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells polling waiters that a lock entry changed, from the kernel's file notifications
 * ({@link WatchService}: inotify on Linux). One watcher per lock directory per JVM, started when
 * the first waiter subscribes and kept while the JVM runs: one thread blocked in the kernel,
 * no CPU while nothing changes. A waiter subscribes to the file names of its lock's entry
 * ({@code STEM.lockdir}, {@code STEM.queue}...); any creation, removal, rename or write of such
 * a name calls it. When the kernel's queue overflowed, every subscriber is called.
 *
 * <p>Notifications only see changes made through this host's kernel: on NFS and other network
 * file systems a holder on another host releases silently. {@link #of} therefore refuses such
 * directories (their waiters keep polling), and so does it where the watch cannot be set up.
 */
final class DirectoryWatcher {
    private static final Logger log = LoggerFactory.getLogger(DirectoryWatcher.class);
    private static final Set<String> NETWORK_FILE_SYSTEMS = Set.of("nfs", "nfs4", "cifs", "smb3", "smbfs",
            "fuse.sshfs", "9p", "afs", "ceph", "glusterfs", "fuse.glusterfs", "lustre", "gpfs", "beegfs");
    private static final ConcurrentHashMap<Path, DirectoryWatcher> WATCHERS = new ConcurrentHashMap<>();
    /** A placeholder for directories that cannot be watched. */
    private static final DirectoryWatcher UNAVAILABLE = new DirectoryWatcher(null, null);

    private final Path directory;
    private final WatchService service;
    private final ConcurrentHashMap<String, List<Runnable>> byFileName = new ConcurrentHashMap<>();
    /** Subscribers called only when their name is removed (or renamed away). */
    private final ConcurrentHashMap<String, List<Runnable>> byRemovedName = new ConcurrentHashMap<>();

    private DirectoryWatcher(Path directory, WatchService service) {
        this.directory = directory;
        this.service = service;
    }

    /** {@return the directory's watcher, or null when changes there cannot be watched} */
    static DirectoryWatcher of(Path directory) {
        DirectoryWatcher watcher = WATCHERS.computeIfAbsent(directory, DirectoryWatcher::start);
        return watcher == UNAVAILABLE ? null : watcher;
    }

    private static DirectoryWatcher start(Path directory) {
        try {
            FileStore store = Files.getFileStore(directory);
            if (NETWORK_FILE_SYSTEMS.contains(store.type())) {
                log.debug("{} is on {}: waiters poll (notifications miss other hosts' changes)", directory, store.type());
                return UNAVAILABLE;
            }
            WatchService service = directory.getFileSystem().newWatchService();
            directory.register(service, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE,
                    StandardWatchEventKinds.ENTRY_MODIFY);
            DirectoryWatcher watcher = new DirectoryWatcher(directory, service);
            Thread thread = new Thread(watcher::run, "kanuki-file-watch");
            thread.setDaemon(true);
            thread.start();
            return watcher;
        } catch (IOException | RuntimeException e) {
            log.debug("cannot watch {}: waiters poll ({})", directory, e.toString());
            return UNAVAILABLE;
        }
    }

    /**
     * Calls {@code onChange} whenever one of the names changes, until cancelled.
     *
     * @param fileNames entry names in the directory
     */
    ChangeSubscription subscribe(List<String> fileNames, Runnable onChange) {
        return subscribe(fileNames, onChange, byFileName);
    }

    /**
     * Calls {@code onChange} whenever one of the names is removed or renamed away, until
     * cancelled: for entries whose removal is the only change that can free the lock (a ttl
     * entry's creation and record rewrites only say that someone holds it). Waiters of a busy
     * lock are then woken once per release instead of once per file operation of each acquirer.
     *
     * @param fileNames entry names in the directory
     */
    ChangeSubscription subscribeToRemovals(List<String> fileNames, Runnable onChange) {
        return subscribe(fileNames, onChange, byRemovedName);
    }

    private static ChangeSubscription subscribe(List<String> fileNames, Runnable onChange,
                                                ConcurrentHashMap<String, List<Runnable>> table) {
        for (String name : fileNames) {
            table.computeIfAbsent(name, n -> new CopyOnWriteArrayList<>()).add(onChange);
        }
        return () -> {
            for (String name : fileNames) {
                table.computeIfPresent(name, (n, list) -> {
                    list.remove(onChange);
                    return list.isEmpty() ? null : list;
                });
            }
        };
    }

    /** {@return how many names have subscribers (for tests)} */
    int watchedNames() {
        return byFileName.size() + byRemovedName.size();
    }

    private void callEveryone() {
        byFileName.values().forEach(list -> list.forEach(DirectoryWatcher::call));
        byRemovedName.values().forEach(list -> list.forEach(DirectoryWatcher::call));
    }

    private void run() {
        while (true) {
            WatchKey key;
            try {
                key = service.take();
            } catch (InterruptedException | ClosedWatchServiceException e) {
                return;
            }
            for (WatchEvent<?> event : key.pollEvents()) {
                if (event.kind() == StandardWatchEventKinds.OVERFLOW) {
                    callEveryone();
                } else if (event.context() instanceof Path changed) {
                    List<Runnable> subscribers = byFileName.get(changed.toString());
                    if (subscribers != null) {
                        subscribers.forEach(DirectoryWatcher::call);
                    }
                    List<Runnable> removals = event.kind() == StandardWatchEventKinds.ENTRY_DELETE
                            ? byRemovedName.get(changed.toString()) : null;
                    if (removals != null) {
                        removals.forEach(DirectoryWatcher::call);
                    }
                }
            }
            if (!key.reset()) {
                log.warn("lock directory {} can no longer be watched (removed?); waiters fall back to polling", directory);
                WATCHERS.remove(directory, this);
                callEveryone();
                return;
            }
        }
    }

    private static void call(Runnable onChange) {
        try {
            onChange.run();
        } catch (RuntimeException e) {
            log.debug("a change subscriber failed", e);
        }
    }
}
