package dev.kanuki.park;

import dev.kanuki.DeadLetter;
import dev.kanuki.LockBackendException;
import dev.kanuki.LockNames;
import dev.kanuki.ParkedItem;
import dev.kanuki.spi.SafeNames;
import dev.kanuki.spi.WorkSpool;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A spool directory: {@code ROOT/<safe key of the name>/} holding
 * <pre>
 *   tmp/                      items being written (ID.ATTEMPTS.RANDOM)
 *   parked/ID.ATTEMPTS        parked items
 *   claimed/TOKEN/ID.ATTEMPTS items a holder took (TOKEN: its fencing token, 20 digits)
 *   dead/ID.ATTEMPTS          dead letters, each with ID.error beside it
 * </pre>
 * Every step is one {@code rename(2)}: park (tmp → parked, after {@code fsync} of the file; the
 * directory is synced after the rename), claim (parked or an older claim → this token's claim),
 * a failed attempt (ID.N → ID.N+1 in place), a dead letter (claim → dead, after the error file).
 * Completion deletes the claimed file. An entry that is not kanuki's (a name not of the form
 * above, a symbolic link, a directory, a FIFO) is never followed, read or removed: it is skipped
 * with a warning, once per spool.
 */
public final class DirectorySpool implements WorkSpool {
    private static final Logger log = LoggerFactory.getLogger(DirectorySpool.class);
    private static final String TMP = "tmp";
    private static final String PARKED = "parked";
    private static final String CLAIMED = "claimed";
    private static final String DEAD = "dead";
    private static final Comparator<ParkedItem> BY_ID = Comparator.comparing(ParkedItem::id);

    private final Path root;
    private final java.util.Set<Path> warned = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /**
     * Opens (and creates) the spool at a directory.
     *
     * @param root the directory, shared by every process taking part
     */
    public DirectorySpool(Path root) {
        this.root = root.toAbsolutePath().normalize();
        try {
            Files.createDirectories(this.root);
        } catch (IOException e) {
            throw new LockBackendException("cannot create the spool directory " + this.root + ": " + e,
                    "check that the parent exists and is writable", e);
        }
    }

    @Override
    public String describe() {
        return "spool directory " + root;
    }

    private Path nameDir(String name) {
        return root.resolve(SafeNames.stem(LockNames.validate(name), "W"));
    }

    /** {@return the directory, created when missing; refused when something else is there} */
    private Path dir(Path dir) {
        BasicFileAttributes attrs = look(dir);
        if (attrs == null) {
            try {
                Files.createDirectory(dir);
            } catch (FileAlreadyExistsException e) {
                // made by another process meanwhile: looked at below
            } catch (IOException e) {
                throw failure("cannot create " + dir, e);
            }
            attrs = look(dir);
        }
        if (attrs == null || !attrs.isDirectory() || attrs.isSymbolicLink()) {
            throw refused(dir, attrs);
        }
        return dir;
    }

    private Path sub(String name, String part) {
        return dir(dir(nameDir(name)).resolve(part));
    }

    @Override
    public void park(String name, ParkedItem item) {
        Path tmpDir = sub(name, TMP);
        Path parked = sub(name, PARKED);
        String file = item.id() + "." + item.attempts();
        Path tmp = tmpDir.resolve(file + "." + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        try {
            // CREATE_NEW fails on anything already there, a planted link included.
            try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                ByteBuffer buffer = ByteBuffer.wrap(item.bytes());
                while (buffer.hasRemaining()) {
                    out.write(buffer);
                }
                out.force(true);
            }
            Files.move(tmp, parked.resolve(file), StandardCopyOption.ATOMIC_MOVE);
            syncDirectory(parked);
        } catch (IOException e) {
            try {
                Files.deleteIfExists(tmp);
            } catch (IOException ignored) {
                // the failure below is what matters; a tmp file left over is harmless
            }
            throw failure("cannot park item " + item.id() + " in " + parked, e);
        }
    }

    private static void syncDirectory(Path dir) {
        // Makes the rename itself durable. Not every file system lets a directory be opened for
        // this; the item is then as durable as the file system makes renames on its own.
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException | UnsupportedOperationException e) {
            log.trace("cannot sync directory {}", dir, e);
        }
    }

    @Override
    public List<ParkedItem> claim(String name, long token, int max) {
        Path claimedDir = sub(name, CLAIMED);
        Path mine = claimedDir.resolve(tokenName(token));
        List<ParkedItem> taken = new ArrayList<>();
        // First what older holders (dead, or whose lock was lost) and this one left claimed.
        for (Path claim : entries(claimedDir, true)) {
            long owner = parseToken(claim.getFileName().toString());
            if (owner < 0 || owner > token) {
                continue;
            }
            for (Path file : sorted(entries(claim, false))) {
                if (taken.size() >= max) {
                    break;
                }
                ParkedItem item = owner == token ? read(file) : move(file, dir(mine));
                if (item != null) {
                    taken.add(item);
                }
            }
            if (owner < token) {
                try {
                    Files.deleteIfExists(claim); // only when empty; a non-empty one stays for later
                } catch (IOException e) {
                    log.trace("claim directory {} not removed yet", claim, e);
                }
            }
        }
        if (taken.size() < max) {
            for (Path file : sorted(entries(sub(name, PARKED), false))) {
                if (taken.size() >= max) {
                    break;
                }
                ParkedItem item = move(file, dir(mine));
                if (item != null) {
                    taken.add(item);
                }
            }
        }
        if (taken.isEmpty()) {
            try {
                Files.deleteIfExists(mine);
            } catch (IOException e) {
                log.trace("claim directory {} not removed", mine, e);
            }
        }
        taken.sort(BY_ID);
        return taken;
    }

    /** {@return the item moved into the directory, or null when another holder moved it first} */
    private ParkedItem move(Path file, Path toDir) {
        Path target = toDir.resolve(file.getFileName());
        try {
            Files.move(file, target, StandardCopyOption.ATOMIC_MOVE);
        } catch (NoSuchFileException e) {
            return null;
        } catch (AtomicMoveNotSupportedException e) {
            throw failure("the spool's file system cannot rename atomically", e);
        } catch (IOException e) {
            throw failure("cannot claim " + file, e);
        }
        return read(target);
    }

    private static String tokenName(long token) {
        return String.format("%020d", token);
    }

    private static long parseToken(String text) {
        if (text.length() != 20) {
            return -1;
        }
        for (int i = 0; i < 20; i++) {
            if (text.charAt(i) < '0' || text.charAt(i) > '9') {
                return -1;
            }
        }
        try {
            return Long.parseLong(text);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** {@return the item in a claimed or parked file, null when it is gone} */
    private ParkedItem read(Path file) {
        String fileName = file.getFileName().toString();
        int dot = fileName.lastIndexOf('.');
        String id = fileName.substring(0, dot);
        int attempts = Integer.parseInt(fileName.substring(dot + 1));
        try {
            return new ParkedItem(id, ItemIds.producer(id), readRegular(file), attempts);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw failure("cannot read " + file, e);
        }
    }

    /**
     * Reads a file that was a regular file when listed, never following a link; opened
     * read-write because opening a FIFO put there since would not block that way, and read
     * positionally, which fails on a FIFO at once.
     */
    private byte[] readRegular(Path file) throws IOException {
        try (FileChannel in = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS)) {
            long size = in.size();
            if (size > Integer.MAX_VALUE - 16) {
                throw new IOException("item too large: " + size + " bytes");
            }
            ByteBuffer buffer = ByteBuffer.allocate((int) size);
            while (buffer.hasRemaining()) {
                if (in.read(buffer, buffer.position()) < 0) {
                    break;
                }
            }
            BasicFileAttributes after = look(file);
            if (after == null) {
                // moved on meanwhile (claimed, completed): a listing reads the spool while a holder works
                throw new NoSuchFileException(file.toString());
            }
            if (!after.isRegularFile()) {
                throw refused(file, after);
            }
            return buffer.array();
        } catch (java.nio.file.FileSystemException e) {
            if (e instanceof NoSuchFileException) {
                throw e;
            }
            BasicFileAttributes attrs = look(file);
            if (attrs != null && !attrs.isRegularFile()) {
                throw refused(file, attrs);
            }
            throw e;
        }
    }

    @Override
    public boolean complete(String name, ParkedItem item, long token) {
        Path file = claimedFile(name, item, token);
        try {
            return Files.deleteIfExists(file);
        } catch (IOException e) {
            throw failure("cannot remove finished item " + file, e);
        }
    }

    private Path claimedFile(String name, ParkedItem item, long token) {
        return sub(name, CLAIMED).resolve(tokenName(token)).resolve(item.id() + "." + item.attempts());
    }

    @Override
    public ParkedItem failed(String name, ParkedItem item, long token) {
        Path file = claimedFile(name, item, token);
        ParkedItem counted = item.withAttempts(item.attempts() + 1);
        try {
            Files.move(file, file.resolveSibling(item.id() + "." + counted.attempts()), StandardCopyOption.ATOMIC_MOVE);
            syncDirectory(file.getParent());
            return counted;
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw failure("cannot count a failed attempt of " + file, e);
        }
    }

    @Override
    public boolean deadLetter(String name, ParkedItem item, long token, String error) {
        Path file = claimedFile(name, item, token);
        Path dead = sub(name, DEAD);
        Path errorFile = dead.resolve(item.id() + ".error");
        Path tmp = sub(name, TMP).resolve(item.id() + ".error." + Long.toHexString(ThreadLocalRandom.current().nextLong()));
        try {
            if (look(file) == null) {
                return false;
            }
            // The error first: a dead letter is never without its reason.
            try (FileChannel out = FileChannel.open(tmp, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                out.write(ByteBuffer.wrap(error.getBytes(StandardCharsets.UTF_8)));
                out.force(true);
            }
            Files.move(tmp, errorFile, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            Files.move(file, dead.resolve(file.getFileName()), StandardCopyOption.ATOMIC_MOVE);
            syncDirectory(dead);
            return true;
        } catch (NoSuchFileException e) {
            return false;
        } catch (IOException e) {
            throw failure("cannot move " + file + " to the dead letters", e);
        }
    }

    @Override
    public boolean isEmpty(String name) {
        Path dir = nameDir(name);
        if (look(dir) == null) {
            return true;
        }
        if (!entries(sub(name, PARKED), false).isEmpty()) {
            return false;
        }
        for (Path claim : entries(sub(name, CLAIMED), true)) {
            if (parseToken(claim.getFileName().toString()) >= 0 && !entries(claim, false).isEmpty()) {
                return false;
            }
        }
        return true;
    }

    @Override
    public List<ParkedItem> list(String name) {
        java.util.Map<String, ParkedItem> byId = new java.util.HashMap<>();
        if (look(nameDir(name)) == null) {
            return new ArrayList<>();
        }
        // Items move only forwards: parked, then claimed, then claimed under a newer token. Looking
        // in that order sees an item that moves meanwhile at least once (at most twice: the later
        // look wins), never zero times, so a caller that finds an item neither waiting nor done
        // (the proof's check of a killed producer's last offer) can trust that.
        addAll(byId, entries(sub(name, PARKED), false));
        for (Path claim : sorted(entries(sub(name, CLAIMED), true))) {
            if (parseToken(claim.getFileName().toString()) >= 0) {
                addAll(byId, entries(claim, false));
            }
        }
        List<ParkedItem> items = new ArrayList<>(byId.values());
        items.sort(BY_ID);
        return items;
    }

    private void addAll(java.util.Map<String, ParkedItem> byId, List<Path> files) {
        for (Path file : files) {
            ParkedItem item = read(file);
            if (item != null) {
                byId.put(item.id(), item);
            }
        }
    }

    @Override
    public List<DeadLetter> deadLetters(String name) {
        List<DeadLetter> letters = new ArrayList<>();
        if (look(nameDir(name)) == null) {
            return letters;
        }
        Path dead = sub(name, DEAD);
        for (Path file : sorted(entries(dead, false))) {
            ParkedItem item = read(file);
            if (item == null) {
                continue;
            }
            String error;
            try {
                error = new String(readRegular(dead.resolve(item.id() + ".error")), StandardCharsets.UTF_8);
            } catch (IOException e) {
                error = "(no error recorded: " + e + ")";
            }
            letters.add(new DeadLetter(item, error));
        }
        return letters;
    }

    /**
     * {@return kanuki's entries in a directory: item files (ID.ATTEMPTS, regular) or claim
     *     directories (20 digits, real directories); anything else is skipped with a warning}
     */
    private List<Path> entries(Path dir, boolean directories) {
        List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            for (Path entry : stream) {
                String fileName = entry.getFileName().toString();
                if (!directories && fileName.endsWith(".error") && ItemIds.isId(fileName.substring(0, fileName.length() - 6))) {
                    continue;
                }
                boolean named = directories ? parseToken(fileName) >= 0 : isItemFile(fileName);
                BasicFileAttributes attrs = look(entry);
                if (attrs == null) {
                    continue; // moved away meanwhile
                }
                boolean kind = directories ? attrs.isDirectory() && !attrs.isSymbolicLink() : attrs.isRegularFile();
                if (named && kind) {
                    found.add(entry);
                } else if (warned.add(entry)) {
                    log.warn("spool entry {} is not kanuki's ({}); left alone", SafeNames.printable(entry.toString()),
                            kindOf(attrs));
                }
            }
        } catch (NoSuchFileException e) {
            return found;
        } catch (IOException e) {
            throw failure("cannot list " + dir, e);
        }
        return found;
    }

    private static boolean isItemFile(String fileName) {
        int dot = fileName.lastIndexOf('.');
        if (dot < 0 || !ItemIds.isId(fileName.substring(0, dot)) || dot == fileName.length() - 1
                || fileName.length() - dot > 10) {
            return false;
        }
        for (int i = dot + 1; i < fileName.length(); i++) {
            if (fileName.charAt(i) < '0' || fileName.charAt(i) > '9') {
                return false;
            }
        }
        return true;
    }

    private static List<Path> sorted(List<Path> files) {
        files.sort(Comparator.comparing(p -> p.getFileName().toString()));
        return files;
    }

    private static BasicFileAttributes look(Path path) {
        try {
            return Files.readAttributes(path, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return null;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String kindOf(BasicFileAttributes attrs) {
        if (attrs.isSymbolicLink()) {
            return "a symbolic link";
        }
        if (attrs.isDirectory()) {
            return "a directory";
        }
        if (attrs.isRegularFile()) {
            return "a regular file with a foreign name";
        }
        return "a special file";
    }

    private static LockBackendException refused(Path path, BasicFileAttributes attrs) {
        String found = attrs == null ? "missing" : kindOf(attrs);
        return new LockBackendException("spool entry " + path + " is " + found
                + "; kanuki never follows, writes through or deletes such entries",
                "if you did not create it, inspect it and remove it by hand", null);
    }

    private LockBackendException failure(String what, IOException e) {
        return new LockBackendException(what + ": " + e, "check the spool directory " + root
                + " (space, permissions, a shared file system that renames atomically)", e);
    }

    @Override
    public void close() {
        // nothing held open between calls
    }

    @Override
    public String toString() {
        return describe();
    }
}
