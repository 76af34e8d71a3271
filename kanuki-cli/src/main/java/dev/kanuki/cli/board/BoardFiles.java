package dev.kanuki.cli.board;

import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.UserPrincipal;
import java.util.Map;
import java.util.Objects;

/**
 * Opens the board's data files ({@code FILE}, {@code FILE.submitted}) where another user may have
 * planted something: the board writes text chosen by whoever posts over HTTP, so a symbolic link,
 * a second hard link or a file of another user in place of a data file would let a visitor append
 * to a file the board's user can write but does not own. Each is looked at without following links
 * ({@code lstat}) before and after opening, and refused unless it is a regular file with one link,
 * owned by this user or root; opens never follow a link ({@code O_NOFOLLOW}).
 */
final class BoardFiles {
    private static final int TYPE = 0170000;
    private static final int REGULAR = 0100000;
    private static final int CURRENT_UID = currentUid();

    private BoardFiles() {
    }

    /**
     * Refuses what is at the path unless it is nothing, or a regular file of this user (or root)
     * with one link.
     *
     * @return its identity, or null when nothing is there
     * @throws IOException naming the path, what is there and what to do
     */
    static Object check(Path path) throws IOException {
        Map<String, Object> a;
        try {
            a = Files.readAttributes(path, "unix:mode,nlink,uid,owner,fileKey", LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            return Files.isRegularFile(path, LinkOption.NOFOLLOW_LINKS) ? "" : null; // not Unix: nothing more to tell
        }
        int mode = ((Number) a.get("mode")).intValue();
        if ((mode & TYPE) != REGULAR) {
            throw refused(path, (mode & TYPE) == 0120000 ? "a symbolic link" : "not a regular file");
        }
        int links = ((Number) a.get("nlink")).intValue();
        if (links > 1) {
            throw refused(path, "a file with " + links + " hard links (another name of it would change too)");
        }
        int uid = ((Number) a.get("uid")).intValue();
        String owner = ((UserPrincipal) a.get("owner")).getName();
        if (uid != 0 && uid != CURRENT_UID && !owner.equals(System.getProperty("user.name"))) {
            throw refused(path, "a file of user " + owner);
        }
        return a.get("fileKey");
    }

    private static IOException refused(Path path, String found) {
        return new IOException("board data file " + path + " is " + found + "; the board writes only its own regular"
                + " files (inspect it and remove it if you did not make it, or give another --data)");
    }

    /** Appends in one {@code write(2)} with {@code O_APPEND}, creating the file when absent. */
    static void append(Path path, byte[] line) throws IOException {
        Object before = check(path);
        try (FileChannel out = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.APPEND, LinkOption.NOFOLLOW_LINKS)) {
            // The path may have been swapped between the look and the open: write only to the file looked at.
            Object after = check(path);
            if (after == null || (before != null && !Objects.equals(before, after))) {
                throw new IOException("board data file " + path + " was replaced while it was opened; nothing written");
            }
            ByteBuffer buffer = ByteBuffer.wrap(line);
            while (buffer.hasRemaining()) {
                out.write(buffer);
            }
        }
    }

    /** @return the file's bytes, or null when there is no file */
    static byte[] read(Path path) throws IOException {
        if (check(path) == null) {
            return null;
        }
        try (InputStream in = Files.newInputStream(path, LinkOption.NOFOLLOW_LINKS)) {
            return in.readAllBytes();
        } catch (NoSuchFileException e) {
            return null;
        }
    }

    /** @return this process's user id (the owner of {@code /proc/self}), or -1 where it cannot be told */
    private static int currentUid() {
        try {
            return ((Number) Files.getAttribute(Path.of("/proc/self"), "unix:uid")).intValue();
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }
}
