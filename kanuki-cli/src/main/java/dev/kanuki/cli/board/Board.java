package dev.kanuki.cli.board;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockedFile;
import dev.kanuki.Offer;
import dev.kanuki.ParkedItem;
import dev.kanuki.ParkingLock;
import dev.kanuki.spi.WorkSpool;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The bulletin board's storage, as a CGI script kept it: a flat file of posts, one a line, that
 * each post reads, appends to and writes back. Under a lock ({@link LockedFile}) no post is lost;
 * without one ({@code --lock none}) two posts that overlap both read the same file and the second
 * write erases the first post. Every post pauses {@link #WINDOW} between reading and writing (the
 * time a script takes to format a post), so that the loss shows with a handful of people posting.
 *
 * <p>Each submission is also logged, one line per form token, to {@code FILE.submitted} with
 * {@code O_APPEND} writes (one {@code write(2)} each, which the kernel never interleaves on a local
 * file), so the count of submissions is right even without the lock. A token already in the file
 * is not posted again: a double-clicked form is one post.
 *
 * <p>With {@code --when-busy park} a post never waits for the lock: it is offered to a
 * {@link ParkingLock}, applied at once when the lock is free, else parked in a spool for the
 * holder, which applies it before it lets go. The holder then writes the plain file itself
 * (temporary file, fsync, atomic rename; {@link LockedFile}'s versions need the lock taken through
 * {@link LockedFile}), and pages read the plain file without the lock: a reader never waits
 * either, and the rename shows it the whole content. The token check makes a parked post that a
 * holder ran twice (it died after writing, before the spool forgot the item) one post.
 *
 * <p>The data files are opened through {@link BoardFiles}: a link, a special file, a second hard
 * link or another user's file in their place is refused at startup and at each request, since
 * the text written comes from whoever posts over HTTP.
 */
final class Board {
    /** The pause between reading and writing back the file. */
    static final Duration WINDOW = Duration.ofMillis(50);
    private static final Duration LOCK_TIMEOUT = Duration.ofSeconds(30);

    private final Path file;
    private final Path submittedLog;
    /** Null with {@code --lock none} and with {@code --when-busy park}. */
    private final LockedFile locked;
    /** The lock, counting acquisitions that may wait; null with {@code --lock none}. */
    private final CountingLock lock;
    /** Null unless {@code --when-busy park}. */
    private final ParkingLock parking;

    /** What became of a post. */
    enum Outcome {
        /** Written under the lock (waiting for it if busy), or without one. */
        ADDED,
        /** Its token was on the board already. */
        REPEATED,
        /** Parking mode: applied at once by this request, which found the lock free. */
        APPLIED,
        /** Parking mode: the lock was busy; the post waits in the spool for the holder. */
        PARKED
    }

    /** A post on the board. */
    record Post(String token, long millis, String author, String text) {
    }

    /**
     * @param file the posts' file
     * @param guard the lock that guards it, or null for none
     * @param spool with a lock: null to wait for the lock, else park busy posts in this spool
     */
    Board(Path file, DistributedLock guard, WorkSpool spool) throws IOException {
        this.file = file.toAbsolutePath();
        this.submittedLog = this.file.resolveSibling(this.file.getFileName() + ".submitted");
        this.lock = guard == null ? null : new CountingLock(guard);
        this.locked = lock == null || spool != null ? null : LockedFile.of(lock, this.file);
        this.parking = lock == null || spool == null ? null : ParkingLock.builder(lock, spool, this::apply).build();
        // Refused at startup with a clear error rather than at the first request.
        BoardFiles.check(this.file);
        BoardFiles.check(submittedLog);
    }

    /** @return true when busy posts are parked rather than waiting for the lock */
    boolean parks() {
        return parking != null;
    }

    /**
     * Adds a post unless its token is on the board already; in parking mode, applies or parks it.
     *
     * @return what became of it
     */
    Outcome post(String token, String author, String text) {
        logSubmission(token);
        String line = encode(token) + "\t" + System.currentTimeMillis() + "\t" + encode(author) + "\t" + encode(text) + "\n";
        if (parking != null) {
            Offer offer = parking.offer(line.getBytes(StandardCharsets.UTF_8));
            return offer.applied() ? Outcome.APPLIED : Outcome.PARKED;
        }
        AtomicBoolean added = new AtomicBoolean();
        if (locked != null) {
            locked.updateText(LOCK_TIMEOUT, before -> {
                pause();
                added.set(!hasToken(before, token));
                return added.get() ? before + line : before;
            });
        } else {
            String before = readPlain();
            pause();
            added.set(!hasToken(before, token));
            if (added.get()) {
                writePlain(before + line, false);
            }
        }
        return added.get() ? Outcome.ADDED : Outcome.REPEATED;
    }

    /**
     * The parking lock's handler: applies one post (its board line) while the lock is held, in
     * whichever board process holds it. Durable when it returns (fsync before the rename), since
     * the spool then forgets the item.
     */
    private void apply(ParkedItem item, long fencingToken) {
        String line = new String(item.bytes(), StandardCharsets.UTF_8);
        int tab = line.indexOf('\t');
        if (tab <= 0 || !line.endsWith("\n")) {
            throw new IllegalArgumentException("not a board line: item " + item.id());
        }
        String before = readPlain();
        pause();
        if (!hasEncodedToken(before, line.substring(0, tab))) {
            writePlain(before + line, true);
        }
    }

    /** @return how many acquisitions of the board's lock could wait for it, in this process */
    long lockWaits() {
        return lock == null ? 0 : lock.waits();
    }

    /** @return the posts waiting in the spool (parking mode; else 0) */
    int parked() {
        return parking == null ? 0 : parking.waiting().size();
    }

    /**
     * Applies what a holder that died left in the spool, if the lock is free (parking mode; else
     * nothing). Never waits.
     */
    void drain() {
        if (parking != null) {
            parking.drain();
        }
    }

    /** @return the posts, oldest first */
    List<Post> posts() {
        // Parking mode reads the plain file, replaced whole by rename: no page waits for the lock.
        String text = locked != null ? locked.read(LOCK_TIMEOUT, b -> new String(b, StandardCharsets.UTF_8)) : readPlain();
        List<Post> posts = new ArrayList<>();
        for (String line : text.split("\n")) {
            String[] f = line.split("\t", -1);
            if (f.length == 4) {
                posts.add(new Post(decode(f[0]), parseLong(f[1]), decode(f[2]), decode(f[3])));
            }
        }
        return posts;
    }

    /** @return how many different form tokens were submitted */
    int submitted() {
        try {
            byte[] log = BoardFiles.read(submittedLog);
            if (log == null) {
                return 0;
            }
            Set<String> tokens = new HashSet<>(List.of(new String(log, StandardCharsets.UTF_8).split("\n")));
            tokens.remove("");
            return tokens.size();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + submittedLog, e);
        }
    }

    private void logSubmission(String token) {
        try {
            // One write(2) with O_APPEND: concurrent processes' lines never overwrite each other.
            BoardFiles.append(submittedLog, (encode(token) + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot append to " + submittedLog, e);
        }
    }

    private static boolean hasToken(String board, String token) {
        return hasEncodedToken(board, encode(token));
    }

    private static boolean hasEncodedToken(String board, String encodedToken) {
        String start = encodedToken + "\t";
        return board.startsWith(start) || board.contains("\n" + start);
    }

    private String readPlain() {
        try {
            byte[] content = BoardFiles.read(file);
            return content == null ? "" : new String(content, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + file, e);
        }
    }

    /**
     * Writes the whole file back (whole, through a rename: readers never see half of it);
     * {@code durable}: fsynced before the rename, and the directory after it.
     */
    private void writePlain(String content, boolean durable) {
        Path temp = file.resolveSibling("." + file.getFileName() + "." + UUID.randomUUID() + ".tmp");
        try {
            BoardFiles.check(file); // never replace a planted link or another user's file
            Files.writeString(temp, content, StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            if (durable) {
                try (FileChannel out = FileChannel.open(temp, StandardOpenOption.WRITE)) {
                    out.force(true);
                }
            }
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            if (durable) {
                try (FileChannel dir = FileChannel.open(file.getParent(), StandardOpenOption.READ)) {
                    dir.force(true);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file, e);
        } finally {
            try {
                Files.deleteIfExists(temp);
            } catch (IOException e) {
                // left behind; harmless
            }
        }
    }

    private static void pause() {
        try {
            Thread.sleep(WINDOW.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    private static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    private static String decode(String s) {
        return URLDecoder.decode(s, StandardCharsets.UTF_8);
    }

    private static long parseLong(String s) {
        try {
            return Long.parseLong(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
