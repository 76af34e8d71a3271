package dev.kanuki.cli.board;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockedFile;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.net.URLEncoder;
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
    /** Null with {@code --lock none}. */
    private final LockedFile locked;

    /** A post on the board. */
    record Post(String token, long millis, String author, String text) {
    }

    /**
     * @param file the posts' file
     * @param lock the lock that guards it, or null for none
     */
    Board(Path file, DistributedLock lock) throws IOException {
        this.file = file.toAbsolutePath();
        this.submittedLog = this.file.resolveSibling(this.file.getFileName() + ".submitted");
        this.locked = lock == null ? null : LockedFile.of(lock, this.file);
        // Refused at startup with a clear error rather than at the first request.
        BoardFiles.check(this.file);
        BoardFiles.check(submittedLog);
    }

    /**
     * Adds a post unless its token is on the board already.
     *
     * @return true when it was added, false when the token had been posted
     */
    boolean post(String token, String author, String text) {
        logSubmission(token);
        String line = encode(token) + "\t" + System.currentTimeMillis() + "\t" + encode(author) + "\t" + encode(text) + "\n";
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
                writePlain(before + line);
            }
        }
        return added.get();
    }

    /** @return the posts, oldest first */
    List<Post> posts() {
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
        String start = encode(token) + "\t";
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

    /** Writes the whole file back (whole, through a rename: readers never see half of it). */
    private void writePlain(String content) {
        Path temp = file.resolveSibling("." + file.getFileName() + "." + UUID.randomUUID() + ".tmp");
        try {
            BoardFiles.check(file); // never replace a planted link or another user's file
            Files.writeString(temp, content, StandardCharsets.UTF_8, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
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
