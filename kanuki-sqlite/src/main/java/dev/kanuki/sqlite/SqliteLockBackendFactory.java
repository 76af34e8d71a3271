package dev.kanuki.sqlite;

import dev.kanuki.LockBackendException;
import dev.kanuki.spi.FileErrors;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockBackendFactory;
import dev.kanuki.spi.LockUri;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * Makes {@code sqlite:} backends: {@code sqlite:/path/locks.db}, {@code sqlite:relative/locks.db}
 * or {@code sqlite:///path/locks.db}. The path is a <em>directory</em> (created with mode 0700
 * when missing) that holds one small SQLite database per lock name; see
 * {@link SqliteLockBackend} for why.
 *
 * <p>Options: {@code journal=wal|delete} (default {@code wal}; applies to databases created from
 * then on), {@code synchronous=off|normal|full} (default {@code normal}), and the engine's
 * {@code poll} (the longest pause between attempts while waiting, default 5ms).
 */
public final class SqliteLockBackendFactory implements LockBackendFactory {

    /** Used by {@link java.util.ServiceLoader}. */
    public SqliteLockBackendFactory() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("sqlite");
    }

    @Override
    public LockBackend create(LockUri uri) {
        uri.rejectUnknownOptions(Set.of("journal", "synchronous"));
        SqliteSettings settings;
        try {
            settings = SqliteSettings.of(uri.param("journal").orElse("wal"), uri.param("synchronous").orElse("normal"));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("backend URI '" + uri + "': " + e.getMessage(), e);
        }
        String body = uri.body();
        if (body.startsWith("//")) {
            if (!uri.authority().isEmpty() && !uri.authority().equals("localhost")) {
                throw new IllegalArgumentException("sqlite URI '" + uri + "' names host '" + uri.authority()
                        + "'; SQLite locks are local: write sqlite:/path/locks.db");
            }
            body = uri.path();
        }
        if (body.isEmpty()) {
            throw new IllegalArgumentException("sqlite URI '" + uri + "' names no path; write sqlite:/path/locks.db");
        }
        return new SqliteLockBackend(prepare(Path.of(body)), settings);
    }

    /** Creates the directory (mode 0700) when missing and checks it is a writable directory. */
    private static Path prepare(Path dir) {
        Path absolute = dir.toAbsolutePath().normalize();
        try {
            if (!Files.exists(absolute, LinkOption.NOFOLLOW_LINKS)) {
                Path parent = absolute.getParent();
                if (parent != null) {
                    Files.createDirectories(parent);
                }
                try {
                    if (Files.getFileStore(parent).supportsFileAttributeView(PosixFileAttributeView.class)) {
                        Files.createDirectory(absolute,
                                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
                    } else {
                        Files.createDirectory(absolute);
                    }
                } catch (FileAlreadyExistsException raced) {
                    // another process created it at the same moment
                }
            }
            if (Files.isRegularFile(absolute)) {
                throw new LockBackendException(absolute + " is a file, but kanuki's sqlite backend keeps one database"
                        + " per lock name in a directory at that path",
                        "name a directory that does not exist yet (it is created), e.g. sqlite:" + absolute + ".d", null);
            }
            if (!Files.isDirectory(absolute)) {
                throw new LockBackendException(absolute + " is not a directory", "name another path with sqlite:DIR", null);
            }
            Path real = absolute.toRealPath();
            if (!Files.isWritable(real)) {
                if (isOnReadOnlyFileSystem(real)) {
                    throw new LockBackendException("lock directory " + real + " is on a read-only file system",
                            "name a directory on a writable file system with sqlite:DIR", null);
                }
                throw new LockBackendException("lock directory " + real + " is not writable by user "
                        + System.getProperty("user.name"), "fix its permissions or name another path", null);
            }
            return real;
        } catch (AccessDeniedException e) {
            throw new LockBackendException("cannot create or open lock directory " + absolute + ": permission denied on "
                    + e.getFile(), "name a directory you can write with sqlite:DIR", e);
        } catch (IOException e) {
            throw new LockBackendException("cannot create lock directory " + absolute + ": " + FileErrors.reason(e),
                    FileErrors.hint(e, "sqlite"), e);
        }
    }

    /**
     * Asked only once the directory is found not writable. The mount table says so for a file
     * system mounted read-only, but not for a read-only bind mount of a writable one (Java finds
     * the mount by its device, shared with the writable mount): there, creating a file tells,
     * failing with EROFS rather than EACCES.
     *
     * @return whether the directory's file system is mounted read-only (where that can be told)
     */
    private static boolean isOnReadOnlyFileSystem(Path dir) {
        try {
            if (Files.getFileStore(dir).isReadOnly()) {
                return true;
            }
        } catch (IOException | RuntimeException e) {
            // unknown: try the file below
        }
        try {
            Files.delete(Files.createTempFile(dir, ".kanuki-probe-", ".tmp")); // not expected: the caller found it not writable
            return false;
        } catch (java.nio.file.FileSystemException e) {
            return "Read-only file system".equals(e.getReason());
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }
}
