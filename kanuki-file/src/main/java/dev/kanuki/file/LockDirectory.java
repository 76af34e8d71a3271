package dev.kanuki.file;

import dev.kanuki.LockBackendException;
import dev.kanuki.spi.FileErrors;
import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * Finds, creates and checks the directory that holds lock files. A directory kanuki creates
 * gets mode 0700. The default directory is per user ({@code $XDG_RUNTIME_DIR/kanuki}, else
 * {@code ~/.cache/kanuki/locks}) and must be owned by the user and closed to others, because a
 * directory another user can write is one where they can plant or remove lock files.
 */
final class LockDirectory {
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

    private LockDirectory() {
    }

    /** {@return the per-user default directory (not yet created)} */
    static Path defaultDirectory() {
        String runtime = System.getenv("XDG_RUNTIME_DIR");
        if (runtime != null && !runtime.isBlank() && Files.isDirectory(Path.of(runtime))) {
            return Path.of(runtime, "kanuki");
        }
        return Path.of(System.getProperty("user.home"), ".cache", "kanuki", "locks");
    }

    /**
     * Makes sure the directory exists and is usable.
     *
     * @param dir the directory named in the URI, or the default
     * @param isDefault whether it is the per-user default (checked more strictly)
     * @return its real path
     * @throws LockBackendException naming the path and what to do, when it cannot be used
     */
    static Path prepare(Path dir, boolean isDefault) {
        return prepare(dir, isDefault, false);
    }

    /**
     * Makes sure the directory exists and is usable, and that no other user can remove, replace
     * or plant its entries (see {@link DirectoryTrust}).
     *
     * @param dir the directory named in the URI, or the default
     * @param isDefault whether it is the per-user default (checked more strictly)
     * @param groupShared whether the URI said {@code shared=group}: the directory's group is trusted
     * @return its real path
     * @throws LockBackendException naming the path and what to do, when it cannot be used
     */
    static Path prepare(Path dir, boolean isDefault, boolean groupShared) {
        Path absolute = dir.toAbsolutePath().normalize();
        try {
            // Links planted by another user are refused before anything is created through them.
            DirectoryTrust.checkLinks(absolute);
            if (!Files.exists(absolute)) {
                createOwnerOnly(absolute);
            }
            if (!Files.isDirectory(absolute)) {
                throw new LockBackendException("lock directory " + absolute + " is not a directory",
                        "remove it or name another directory with file:DIR", null);
            }
            Path real = absolute.toRealPath();
            if (isDefault) {
                checkPrivate(real);
            }
            if (!Files.isWritable(real)) {
                if (isOnReadOnlyFileSystem(real)) {
                    throw new LockBackendException("lock directory " + real + " is on a read-only file system",
                            "name a directory on a writable file system with file:DIR", null);
                }
                throw new LockBackendException("lock directory " + real + " is not writable by user "
                        + System.getProperty("user.name"),
                        "fix its permissions or name another directory with file:DIR", null);
            }
            if (!isDefault) {
                // After the checks above: a directory nobody can write (a read-only mount is 1777) is best called so.
                DirectoryTrust.check(absolute, real, groupShared);
            }
            return real;
        } catch (AccessDeniedException e) {
            throw new LockBackendException("cannot create or open lock directory " + absolute + ": permission denied on "
                    + e.getFile(), "name a directory you can write with file:DIR", e);
        } catch (IOException e) {
            throw new LockBackendException("cannot create lock directory " + absolute + ": " + FileErrors.reason(e),
                    FileErrors.hint(e, "file"), e);
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
    static boolean isOnReadOnlyFileSystem(Path dir) {
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

    private static void createOwnerOnly(Path dir) throws IOException {
        Path parent = dir.getParent();
        if (parent != null && !Files.exists(parent)) {
            Files.createDirectories(parent);
        }
        try {
            if (Files.getFileStore(parent == null ? dir.getRoot() : parent).supportsFileAttributeView(PosixFileAttributeView.class)) {
                Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
                Files.setPosixFilePermissions(dir, OWNER_ONLY); // the umask may have removed bits; make it exact
            } else {
                Files.createDirectory(dir);
            }
        } catch (FileAlreadyExistsException raced) {
            // another process created it at the same moment: fine, it is checked below
        }
    }

    private static void checkPrivate(Path dir) throws IOException {
        PosixFileAttributeView view = Files.getFileAttributeView(dir, PosixFileAttributeView.class, LinkOption.NOFOLLOW_LINKS);
        if (view == null) {
            return;
        }
        PosixFileAttributes attrs = view.readAttributes();
        String me = System.getProperty("user.name");
        if (!attrs.owner().getName().equals(me)) {
            throw new LockBackendException("default lock directory " + dir + " belongs to " + attrs.owner().getName()
                    + ", not to " + me, "remove it, or name a directory of yours with file:DIR", null);
        }
        Set<PosixFilePermission> perms = attrs.permissions();
        if (perms.contains(PosixFilePermission.GROUP_WRITE) || perms.contains(PosixFilePermission.OTHERS_WRITE)) {
            throw new LockBackendException("default lock directory " + dir + " is writable by other users ("
                    + PosixFilePermissions.toString(perms) + ")", "run: chmod 700 " + dir, null);
        }
    }
}
