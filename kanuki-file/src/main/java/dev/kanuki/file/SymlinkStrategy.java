package dev.kanuki.file;

import java.io.IOException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotLinkException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * {@code symlink}: the lock is a symbolic link whose <em>target text</em> is the owner record
 * (the process id and the rest of the record, in the link itself). Creating a link is atomic and fails if the name exists; the record is
 * part of the same step, so a reader never sees a lock without its owner. The link is read with
 * {@code readlink}, never followed. Renewal makes a new link and renames it over the old one.
 */
final class SymlinkStrategy implements EntryStrategy {
    @Override
    public String name() {
        return "symlink";
    }

    @Override
    public Path entry(Path directory, String stem) {
        return directory.resolve(stem + ".lnk");
    }

    @Override
    public boolean tryCreate(Path entry, TtlRecord record) throws IOException {
        try {
            Files.createSymbolicLink(entry, Path.of(record.encode()));
            return true;
        } catch (FileAlreadyExistsException e) {
            return false;
        }
    }

    @Override
    public Observed read(Path entry) throws IOException {
        try {
            return EntryFiles.observe(Files.readSymbolicLink(entry).toString(), entry);
        } catch (NoSuchFileException e) {
            return Observed.ABSENT;
        } catch (NotLinkException e) {
            BasicFileAttributes attrs = EntryFiles.attributes(entry);
            return attrs == null ? Observed.ABSENT : EntryFiles.foreign(entry, attrs, "a lock link");
        }
    }

    @Override
    public void rewrite(Path entry, TtlRecord record) throws IOException {
        Path temp = entry.resolveSibling(entry.getFileName() + ".tmp." + record.id());
        Files.deleteIfExists(temp);
        Files.createSymbolicLink(temp, Path.of(record.encode()));
        try {
            Files.move(temp, entry, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(temp);
        }
    }

    @Override
    public void remove(Path entry) throws IOException {
        Files.deleteIfExists(entry); // removes the link itself, never its target
    }
}
