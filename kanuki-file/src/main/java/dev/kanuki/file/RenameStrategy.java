package dev.kanuki.file;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * {@code rename}: each lock has one token file. While the lock is free it is called
 * {@code STEM.free}; taking the lock renames it to {@code STEM.held}, and only one rename of a
 * file can succeed, because after it the source name is gone. Releasing removes the token (and
 * its marker), so a name nobody holds leaves no file; the next acquirer makes a new token. A
 * token is made only by whoever creates the marker {@code STEM.init} ({@code CREATE_NEW}), so
 * two processes can never make two tokens.
 *
 * <p>The owner record is written into the token after the rename; until then the token says
 * "free", and the stale rules go by its age (a rename updates the ctime).
 */
final class RenameStrategy implements EntryStrategy {
    private static final long LOST_TOKEN_GRACE_MS = 10_000;

    @Override
    public String name() {
        return "rename";
    }

    @Override
    public Path entry(Path directory, String stem) {
        return directory.resolve(stem + ".held");
    }

    private static Path free(Path held) {
        String name = held.getFileName().toString();
        return held.resolveSibling(name.substring(0, name.length() - ".held".length()) + ".free");
    }

    private static Path marker(Path held) {
        String name = held.getFileName().toString();
        return held.resolveSibling(name.substring(0, name.length() - ".held".length()) + ".init");
    }

    @Override
    public boolean createsBare() {
        return true;
    }

    /** Takes the token; it says "free" until the record is written over it. */
    @Override
    public boolean tryCreateBare(Path held) throws IOException {
        for (int round = 0; round < 2; round++) {
            try {
                Files.move(free(held), held, StandardCopyOption.ATOMIC_MOVE);
                try {
                    SafeFiles.checkRegular("lock token file", held, false);
                } catch (dev.kanuki.LockBackendException planted) {
                    // Something not a token was planted at STEM.free: put it back where it was found.
                    Files.move(held, free(held), StandardCopyOption.ATOMIC_MOVE);
                    throw SafeFiles.refused("lock token file", free(held),
                            SafeFiles.kind(free(held), SafeFiles.look(free(held))));
                }
                return true;
            } catch (NoSuchFileException e) {
                if (EntryFiles.attributes(held) != null || !createToken(held)) {
                    return false;
                }
            }
        }
        return false;
    }

    @Override
    public boolean tryCreate(Path held, TtlRecord record) throws IOException {
        for (int round = 0; round < 2; round++) {
            try {
                Files.move(free(held), held, StandardCopyOption.ATOMIC_MOVE);
                try {
                    SafeFiles.checkRegular("lock token file", held, false);
                } catch (dev.kanuki.LockBackendException planted) {
                    // Something not a token was planted at STEM.free: put it back where it was found.
                    Files.move(held, free(held), StandardCopyOption.ATOMIC_MOVE);
                    throw SafeFiles.refused("lock token file", free(held),
                            SafeFiles.kind(free(held), SafeFiles.look(free(held))));
                }
                try {
                    rewrite(held, record);
                } catch (IOException | RuntimeException e) {
                    // The token still says "free" (the record is written to a new file and renamed in): give it back.
                    Files.move(held, free(held), StandardCopyOption.ATOMIC_MOVE);
                    throw e;
                }
                return true;
            } catch (NoSuchFileException e) {
                if (EntryFiles.attributes(held) != null || !createToken(held)) {
                    return false;
                }
            }
        }
        return false;
    }

    /**
     * Makes the free token when there is none, under the marker {@code STEM.init}
     * ({@code CREATE_NEW}): only the process that made the marker makes a token, so there are
     * never two. The holder's release removes the marker first and the token after, so a marker
     * made while a token is still held is seen by the check below, and withdrawn.
     *
     * @return true when a token now exists
     */
    private static boolean createToken(Path held) throws IOException {
        Path marker = marker(held);
        try {
            Files.createFile(marker);
        } catch (FileAlreadyExistsException e) {
            checkMarker(marker);
            if (EntryFiles.attributes(free(held)) != null) {
                return true;
            }
            clearLostMarker(held, marker);
            return false;
        }
        if (EntryFiles.attributes(held) != null) {
            Files.deleteIfExists(marker); // a holder is releasing right now: its release removes the token
            return false;
        }
        try (FileChannel channel = FileChannel.open(free(held), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS)) {
            EntryFiles.writeNew(channel, TtlRecord.FREE);
        } catch (FileAlreadyExistsException e) {
            // cannot happen while we hold the marker, unless planted: it is checked when taken
        }
        return true;
    }

    /**
     * A marker without a token for {@link #LOST_TOKEN_GRACE_MS}: its maker died between its two
     * steps (they are microseconds apart). Removed under the breaker, after a second look.
     */
    private static void clearLostMarker(Path held, Path marker) throws IOException {
        BasicFileAttributes attrs = EntryFiles.attributes(marker);
        if (attrs == null || EntryFiles.attributes(held) != null || EntryFiles.ageMillis(marker) < LOST_TOKEN_GRACE_MS) {
            return;
        }
        String stem = held.getFileName().toString();
        stem = stem.substring(0, stem.length() - ".held".length());
        try (BreakerLock breaker = BreakerLock.tryTake(held.getParent(), stem)) {
            if (breaker != null && EntryFiles.attributes(held) == null && EntryFiles.attributes(free(held)) == null
                    && EntryFiles.ageMillis(marker) >= LOST_TOKEN_GRACE_MS && checkMarker(marker)) {
                Files.deleteIfExists(marker);
            }
        } catch (java.nio.file.NoSuchFileException e) {
            // removed meanwhile
        }
    }

    /**
     * Checks that what is at the marker's path is one kanuki could have made: a regular, empty
     * file with a single link. Anything else (a device, FIFO, socket, directory, a file with
     * content or a second name) was planted, and is refused at once rather than waited on and
     * later removed as a lost marker.
     *
     * @return true when a marker is there (false when it is gone)
     * @throws dev.kanuki.LockBackendException naming the path and what was found
     */
    static boolean checkMarker(Path marker) throws IOException {
        BasicFileAttributes attrs = SafeFiles.checkRegular("lock token marker", marker, false);
        if (attrs == null) {
            return false;
        }
        if (attrs.size() != 0) {
            throw SafeFiles.refused("lock token marker", marker, "a regular file with content (" + attrs.size()
                    + " bytes; kanuki's marker is always empty)");
        }
        int links = SafeFiles.links(marker);
        if (links > 1) {
            throw SafeFiles.linked("lock token marker", marker, links);
        }
        return links == 1;
    }

    /**
     * A free token nobody took for {@link #LOST_TOKEN_GRACE_MS} (its maker died before taking
     * it) is taken like an acquirer takes it (one rename, which only one process can win) and
     * removed like a release removes it; a marker without a token is cleared under the breaker.
     */
    @Override
    public boolean pruneLeftover(Path path, boolean dryRun) throws IOException {
        String file = path.getFileName().toString();
        if (!file.endsWith(".free") && !file.endsWith(".init")) {
            return false;
        }
        Path held = path.resolveSibling(file.substring(0, file.length() - ".free".length()) + ".held");
        if (EntryFiles.attributes(held) != null || EntryFiles.ageMillis(path) < LOST_TOKEN_GRACE_MS) {
            return false;
        }
        if (file.endsWith(".init")) {
            if (EntryFiles.attributes(free(held)) != null || !checkMarker(path)) {
                return false; // a free token is there: it is pruned (with its marker) on its own
            }
            if (!dryRun) {
                clearLostMarker(held, path);
            }
            return dryRun || EntryFiles.attributes(path) == null;
        }
        if (SafeFiles.checkRegular("lock token file", path, false) == null) {
            return false;
        }
        if (dryRun) {
            return true;
        }
        try {
            Files.move(path, held, StandardCopyOption.ATOMIC_MOVE);
        } catch (NoSuchFileException e) {
            return false; // taken meanwhile
        }
        Observed taken = read(held);
        if (taken.state() != Observed.State.FREE) {
            Files.move(held, path, StandardCopyOption.ATOMIC_MOVE); // not a token kanuki made: put it back
            return false;
        }
        remove(held);
        return true;
    }

    @Override
    public Observed read(Path held) throws IOException {
        BasicFileAttributes attrs = EntryFiles.attributes(held);
        if (attrs == null) {
            return Observed.ABSENT;
        }
        if (!attrs.isRegularFile()) {
            return EntryFiles.foreign(held, attrs, "a lock token file");
        }
        String text = EntryFiles.readText(held);
        return text == null ? Observed.ABSENT : EntryFiles.observe(text, held);
    }

    @Override
    public void rewrite(Path held, TtlRecord record) throws IOException {
        // A new file renamed over the token: never written in place, so never through a planted link.
        SafeFiles.checkRegular("lock token file", held, false);
        EntryFiles.replaceAtomically(held, record.encode(), record.id());
    }

    /**
     * Removes the token: the lock leaves no file behind. The marker goes first, so that nobody
     * can make a second token while this one still exists (see {@link #createToken}).
     */
    @Override
    public void remove(Path held) throws IOException {
        if (SafeFiles.checkRegular("lock token file", held, false) == null) {
            return;
        }
        try {
            if (checkMarker(marker(held))) {
                Files.deleteIfExists(marker(held));
            }
        } catch (dev.kanuki.LockBackendException planted) {
            // Something foreign replaced the marker while the lock was held: leave it (the next
            // acquirer refuses it with the same message), but still release the lock.
        }
        Files.deleteIfExists(held);
    }
}
