package dev.kanuki.file;

import dev.kanuki.LockBackendException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.UserPrincipal;
import java.util.Map;

/**
 * Decides whether a lock directory named with {@code file:DIR} may be trusted: whoever can remove,
 * rename or plant entries in it can delete a holder's lock file (a second process then takes the
 * lock at once) or move the fencing counter back. The rule (also in {@code docs/backends/file.md}):
 *
 * <ol>
 *   <li>No symbolic link on the way to it may belong to another user (root's and one's own are
 *       followed); a link in a world-writable sticky directory such as {@code /tmp} is followed
 *       only when it belongs to this user or to that directory's owner, as the kernel's
 *       {@code protected_symlinks} does.</li>
 *   <li>The directory and every directory above it belong to this user or to root.</li>
 *   <li>The directory is not world-writable, sticky bit or not: the sticky bit stops others from
 *       removing kanuki's files, not from planting lock files and counters before kanuki makes
 *       them.</li>
 *   <li>It is not group-writable, unless its group is named like its owner (the user-private
 *       groups of a {@code umask 002}); a directory above it may be group- or world-writable
 *       only with the sticky bit.</li>
 *   <li>{@code file:DIR?shared=group} trusts the directory's group and the owners of the
 *       directory and those above it instead (rules 2 and 4 are lifted; 1 and 3 stay): every
 *       member of the group can then take, break or block these locks.</li>
 * </ol>
 *
 * Root-owned directories pass rule 2, so temporary directories made by a test running as root
 * and the per-user default directory both pass.
 */
final class DirectoryTrust {
    private static final int ROOT = 0;
    private static final int STICKY = 01000;
    private static final int GROUP_WRITE = 0020;
    private static final int OTHERS_WRITE = 0002;
    private static final int TYPE = 0170000;
    private static final int LINK = 0120000;
    private static final int CURRENT_UID = currentUid();

    private DirectoryTrust() {
    }

    /** What one {@code lstat} told about a path. */
    private record Entry(int uid, int mode, String owner, String group) {
        boolean isLink() {
            return (mode & TYPE) == LINK;
        }
    }

    /**
     * Refuses a path reached through a symbolic link another user could have planted (rule 1).
     * Every link on the way is checked, including links inside a link's target (a link of root
     * pointing through a link of another user). Stops at the first component that does not exist yet.
     */
    static void checkLinks(Path absolute) throws IOException {
        walk(absolute, absolute, new int[] {40});
    }

    /** {@return the real path reached, or null when a component does not exist} */
    private static Path walk(Path path, Path named, int[] linksLeft) throws IOException {
        Path current = path.getRoot();
        if (current == null) {
            return null;
        }
        for (Path name : path) {
            String part = name.toString();
            if (part.equals(".")) {
                continue;
            }
            if (part.equals("..")) {
                // current has no link in it: its parent is what the kernel would reach
                current = current.getParent() == null ? current : current.getParent();
                continue;
            }
            Path next = current.resolve(name);
            Entry entry = look(next);
            if (entry == null) {
                return null;
            }
            if (!entry.isLink()) {
                current = next;
                continue;
            }
            if (!trusted(entry)) {
                throw new LockBackendException("lock directory " + named + " is reached through the symbolic link "
                        + next + " of user " + entry.owner() + "; kanuki follows only links of root and of "
                        + me(), "name the directory itself with file:DIR, or remove the link if you did not make it",
                        null);
            }
            Entry parent = look(current);
            if (parent != null && (parent.mode() & OTHERS_WRITE) != 0 && (parent.mode() & STICKY) != 0
                    && !isMe(entry.uid()) && entry.uid() != parent.uid()) {
                throw new LockBackendException("lock directory " + named + " is reached through the symbolic link "
                        + next + " of user " + entry.owner() + " in the world-writable directory " + current
                        + "; as the kernel's protected_symlinks, kanuki follows such a link only when it is yours"
                        + " or the directory owner's", "name the directory itself with file:DIR", null);
            }
            if (--linksLeft[0] < 0) {
                throw new LockBackendException("lock directory " + named + " is reached through too many symbolic links",
                        "name the directory itself with file:DIR", null);
            }
            current = walk(current.resolve(Files.readSymbolicLink(next)), named, linksLeft);
            if (current == null) {
                return null; // a dangling link: creating the directory will fail and say so
            }
        }
        return current;
    }

    /**
     * Refuses a directory other users could tamper with (rules 2 to 5).
     *
     * @param named the directory as named (for messages)
     * @param real its real path
     * @param groupShared whether {@code shared=group} was given
     */
    static void check(Path named, Path real, boolean groupShared) throws IOException {
        Entry dir = look(real);
        if (dir == null) {
            return; // removed meanwhile: the first lock file will say so
        }
        String octal = String.format("%04o", dir.mode() & 07777);
        if ((dir.mode() & OTHERS_WRITE) != 0) {
            throw new LockBackendException("lock directory " + real + " is writable by every user (mode " + octal
                    + "): any of them can remove or plant lock files and move the fencing counter",
                    "run: chmod o-w " + real + " (if it is yours), or name a directory of yours with file:DIR", null);
        }
        if (!groupShared && !trusted(dir)) {
            throw new LockBackendException("lock directory " + real + " belongs to " + dir.owner() + ", not to " + me()
                    + " or root: its owner can remove or replace lock files",
                    "name a directory of yours with file:DIR (file: alone is a per-user one), or add ?shared=group"
                            + " if every member of group " + dir.group() + " and " + dir.owner() + " may take and break"
                            + " these locks", null);
        }
        if (!groupShared && (dir.mode() & GROUP_WRITE) != 0 && !privateGroup(dir)) {
            throw new LockBackendException("lock directory " + real + " is writable by group " + dir.group() + " (mode "
                    + octal + "): its members can remove or plant lock files",
                    "run: chmod g-w " + real + ", or add ?shared=group to the URI if every member of " + dir.group()
                            + " may take and break these locks", null);
        }
        for (Path above = real.getParent(); above != null; above = above.getParent()) {
            Entry parent = look(above);
            if (parent == null) {
                continue;
            }
            if (!groupShared && !trusted(parent)) {
                throw new LockBackendException("lock directory " + real + " is inside " + above + ", which belongs to "
                        + parent.owner() + ": its owner can rename the lock directory away and put another in its place",
                        "name a directory whose parents belong to you or root with file:DIR", null);
            }
            boolean othersWrite = (parent.mode() & OTHERS_WRITE) != 0;
            boolean groupWrite = (parent.mode() & GROUP_WRITE) != 0 && !groupShared && !privateGroup(parent);
            if ((othersWrite || groupWrite) && (parent.mode() & STICKY) == 0) {
                throw new LockBackendException("lock directory " + real + " is inside " + above + ", which other users"
                        + " can write without the sticky bit (mode " + String.format("%04o", parent.mode() & 07777)
                        + "): they can rename the lock directory away and put another in its place",
                        "run: chmod +t " + above + " (or remove its write bits for others), or name another directory"
                                + " with file:DIR", null);
            }
        }
    }

    private static Entry look(Path path) throws IOException {
        Map<String, Object> a;
        try {
            a = Files.readAttributes(path, "unix:uid,mode,owner,group", LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            return new Entry(CURRENT_UID, 0700, me(), me()); // not a Unix file system: no owners to check
        }
        return new Entry(((Number) a.get("uid")).intValue(), ((Number) a.get("mode")).intValue(),
                ((UserPrincipal) a.get("owner")).getName(), ((GroupPrincipal) a.get("group")).getName());
    }

    private static boolean trusted(Entry entry) {
        // By name too: /proc/self belongs to root in a process that is not dumpable.
        return entry.uid() == ROOT || isMe(entry.uid()) || entry.owner().equals(me());
    }

    private static boolean isMe(int uid) {
        return CURRENT_UID >= 0 && uid == CURRENT_UID;
    }

    /** A user-private group (Debian, Fedora): named like its owner, which alone is in it. */
    private static boolean privateGroup(Entry entry) {
        return entry.group().equals(entry.owner());
    }

    private static String me() {
        return System.getProperty("user.name");
    }

    /** {@return this process's user id (the owner of {@code /proc/self}), or -1 where it cannot be told} */
    private static int currentUid() {
        try {
            return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
