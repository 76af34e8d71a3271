package dev.kanuki.file;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The JVM-wide table of open lock files, per directory. Every backend on the same directory
 * shares it, so that the JVM has one channel per lock file (see {@link LockFile} for why two
 * would be dangerous). Channels are closed when the last backend on the directory closes.
 */
final class LockFileTable {
    private static final Map<Path, DirectoryFiles> DIRECTORIES = new HashMap<>();

    private LockFileTable() {
    }

    static synchronized DirectoryFiles open(Path directory) {
        DirectoryFiles files = DIRECTORIES.computeIfAbsent(directory, DirectoryFiles::new);
        files.users++;
        return files;
    }

    /** The lock files of one directory. */
    static final class DirectoryFiles {
        private final Path directory;
        /** The one LockFile per path: the channel table. */
        private final ConcurrentHashMap<Path, LockFile> files = new ConcurrentHashMap<>();
        /** Lookup cache from lock key to its LockFile (saves hashing the name each time). */
        private final ConcurrentHashMap<String, LockFile> byKey = new ConcurrentHashMap<>();
        private int users;

        private DirectoryFiles(Path directory) {
            this.directory = directory;
        }

        LockFile get(String key, String name, Supplier<String> fileName) {
            LockFile file = byKey.get(key);
            if (file == null) {
                file = files.computeIfAbsent(directory.resolve(fileName.get()), LockFile::new);
                file.name(name);
                if (byKey.size() < 10_000) {
                    byKey.put(key, file);
                }
            }
            return file;
        }

        /** @return the LockFile of a path found by listing (its name read from the file later) */
        LockFile byPath(Path path) {
            return files.computeIfAbsent(path, LockFile::new);
        }

        /** Drops one user; the last one closes every channel (no lock is held through them by then). */
        void close() {
            synchronized (LockFileTable.class) {
                if (--users > 0) {
                    return;
                }
                DIRECTORIES.remove(directory);
            }
            files.values().forEach(LockFile::closeQuietly);
            files.clear();
            byKey.clear();
        }
    }
}
