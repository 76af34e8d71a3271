package dev.kanuki.file;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;

/**
 * {@code create}: the lock is a file created with {@code O_CREAT|O_EXCL} ({@code CREATE_NEW}),
 * which creates it or fails in one step ("check, then create" would be two steps, and two
 * processes could both pass the check). The record is written into the new file with one write and ends in a checksum, so a
 * reader that comes between the create and the write sees "no record yet", never a wrong one.
 */
final class CreateStrategy implements EntryStrategy {
    @Override
    public String name() {
        return "create";
    }

    @Override
    public Path entry(Path directory, String stem) {
        return directory.resolve(stem + ".lck");
    }

    @Override
    public boolean tryCreate(Path entry, TtlRecord record) throws IOException {
        FileChannel channel;
        try {
            channel = FileChannel.open(entry, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE,
                    LinkOption.NOFOLLOW_LINKS);
        } catch (FileAlreadyExistsException e) {
            return false;
        }
        try (channel) {
            EntryFiles.writeNew(channel, record.encode());
            return true;
        } catch (IOException | RuntimeException e) {
            Files.deleteIfExists(entry); // ours, and without a whole record (a full disk): undo it
            throw e;
        }
    }

    @Override
    public boolean createsBare() {
        return true;
    }

    @Override
    public boolean tryCreateBare(Path entry) throws IOException {
        try {
            FileChannel.open(entry, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS)
                    .close();
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
        if (!attrs.isRegularFile()) {
            return EntryFiles.foreign(entry, attrs, "a lock file");
        }
        String text = EntryFiles.readText(entry);
        return text == null ? Observed.ABSENT : EntryFiles.observe(text, entry);
    }

    @Override
    public void rewrite(Path entry, TtlRecord record) throws IOException {
        // A new file renamed over the entry: never written in place, so never through a planted link.
        if (SafeFiles.checkRegular("lock file", entry, false) == null) {
            throw new NoSuchFileException(entry.toString());
        }
        EntryFiles.replaceAtomically(entry, record.encode(), record.id());
    }

    @Override
    public void remove(Path entry) throws IOException {
        Files.deleteIfExists(entry);
    }
}
