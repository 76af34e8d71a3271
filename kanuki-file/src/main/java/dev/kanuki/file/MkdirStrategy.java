package dev.kanuki.file;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.UUID;

/**
 * {@code mkdir}: the lock is a directory; {@code mkdir} either creates it or fails because it
 * exists, in one step, on every file system including NFS. The owner record is the file
 * {@code owner} inside, written to a temporary name and renamed into place, so a reader sees a
 * whole record or none (none: the holder is between the two steps; the stale rules then go by
 * the directory's age).
 */
final class MkdirStrategy implements EntryStrategy {
    private static final String OWNER = "owner";

    @Override
    public String name() {
        return "mkdir";
    }

    @Override
    public Path entry(Path directory, String stem) {
        return directory.resolve(stem + ".lockdir");
    }

    @Override
    public boolean tryCreate(Path entry, TtlRecord record) throws IOException {
        try {
            Files.createDirectory(entry);
        } catch (FileAlreadyExistsException e) {
            return false;
        }
        try {
            EntryFiles.replaceAtomically(entry.resolve(OWNER), record.encode(), record.id());
        } catch (IOException | RuntimeException e) {
            remove(entry); // ours, and without a record: nobody else can have taken it
            throw e;
        }
        return true;
    }

    @Override
    public boolean createsBare() {
        return true;
    }

    @Override
    public boolean tryCreateBare(Path entry) throws IOException {
        try {
            Files.createDirectory(entry);
            return true;
        } catch (FileAlreadyExistsException e) {
            return false;
        }
    }

    @Override
    public Observed read(Path entry) throws IOException {
        BasicFileAttributes attrs = EntryFiles.attributes(entry);
        if (attrs == null) {
            return Observed.ABSENT;
        }
        if (!attrs.isDirectory() || attrs.isSymbolicLink()) {
            return EntryFiles.foreign(entry, attrs, "a lock directory");
        }
        try {
            String text = EntryFiles.readText(entry.resolve(OWNER));
            if (text == null) {
                return new Observed(Observed.State.CORRUPTED, null, "no owner record yet", EntryFiles.ageMillis(entry));
            }
            return EntryFiles.observe(text, entry);
        } catch (NoSuchFileException e) {
            return Observed.ABSENT;
        }
    }

    @Override
    public void rewrite(Path entry, TtlRecord record) throws IOException {
        EntryFiles.replaceAtomically(entry.resolve(OWNER), record.encode(), record.id());
    }

    @Override
    public void remove(Path entry) throws IOException {
        // Rename first so the lock vanishes in one step, then clean up the renamed directory.
        Path trash = entry.resolveSibling(entry.getFileName() + ".removed." + UUID.randomUUID());
        try {
            Files.move(entry, trash, StandardCopyOption.ATOMIC_MOVE);
        } catch (NoSuchFileException e) {
            return;
        }
        try (var children = Files.newDirectoryStream(trash)) {
            for (Path child : children) {
                Files.deleteIfExists(child);
            }
        }
        Files.deleteIfExists(trash);
    }
}
