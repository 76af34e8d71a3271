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
 * file can succeed, because after it the source name is gone. Releasing renames it back. The
 * token is created once, by whoever first creates the marker {@code STEM.init}
 * ({@code CREATE_NEW}), so two processes can never make two tokens.
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
    public boolean tryCreate(Path held, TtlRecord record) throws IOException {
        for (int round = 0; round < 2; round++) {
            try {
                Files.move(free(held), held, StandardCopyOption.ATOMIC_MOVE);
                rewrite(held, record);
                return true;
            } catch (NoSuchFileException e) {
                if (EntryFiles.attributes(held) != null || !createToken(held)) {
                    return false;
                }
            }
        }
        return false;
    }

    /** Creates the free token the first time a lock is used; true when a token now exists. */
    private static boolean createToken(Path held) throws IOException {
        Path marker = marker(held);
        try {
            Files.createFile(marker);
        } catch (FileAlreadyExistsException e) {
            // Someone made the token before. If it vanished (removed by hand) long ago, make another.
            if (EntryFiles.attributes(free(held)) != null || EntryFiles.ageMillis(marker) < LOST_TOKEN_GRACE_MS) {
                return EntryFiles.attributes(free(held)) != null;
            }
            Files.setLastModifiedTime(marker, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis()));
        }
        try (FileChannel channel = FileChannel.open(free(held), StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS)) {
            EntryFiles.writeInPlace(channel, TtlRecord.FREE);
        } catch (FileAlreadyExistsException e) {
            // made at the same moment by another process: there is a token
        }
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
        try (FileChannel channel = FileChannel.open(held, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
            EntryFiles.writeInPlace(channel, record.encode());
        }
    }

    @Override
    public void remove(Path held) throws IOException {
        try (FileChannel channel = FileChannel.open(held, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)) {
            EntryFiles.writeInPlace(channel, TtlRecord.FREE);
        } catch (NoSuchFileException e) {
            return;
        }
        Files.move(held, free(held), StandardCopyOption.ATOMIC_MOVE);
    }
}
