package dev.kanuki.file;

import dev.kanuki.LockBackendException;
import java.io.IOException;
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

/**
 * The fencing counter of one ttl lock: a file whose <em>name</em> holds the value,
 * {@code STEM.fence.N}. Taking the next token renames it to {@code STEM.fence.N+1}: rename of a
 * file that is gone fails, so two processes can never both move N to N+1 (a compare-and-swap
 * made of one rename). That matters when a holder paused past its lease wakes up and takes a
 * token after a newer holder did: it gets a larger, unused number and then fails its ownership
 * check, instead of writing an old value back over a newer one.
 *
 * <p>A plain hint file {@code STEM.fence} remembers the last value so the counter is found
 * without listing the directory; a stale hint only costs a few probes forward.
 */
final class FenceCounter {
    private static final int PROBES = 64;

    private final Path directory;
    private final String stem;
    private final Path hint;

    FenceCounter(Path directory, String stem) {
        this.directory = directory;
        this.stem = stem;
        this.hint = directory.resolve(stem + ".fence");
    }

    private Path counter(long value) {
        return directory.resolve(stem + ".fence." + value);
    }

    /** @return the next token, strictly greater than every token this counter gave before */
    long next() {
        try {
            long start = readHint();
            for (int round = 0; round < 3; round++) {
                for (long n = start; n < start + PROBES; n++) {
                    if (tryMove(n)) {
                        writeHint(n + 1);
                        return n + 1;
                    }
                }
                start = findByListing();
                if (start < 0) {
                    start = Math.max(readHint(), 0);
                    try {
                        Files.createFile(counter(start));
                    } catch (FileAlreadyExistsException raced) {
                        // another process initialised it at the same moment; use theirs
                    }
                }
            }
            throw new LockBackendException("the fencing counter " + counter(start) + " keeps moving",
                    "something else renames files in " + directory, null);
        } catch (IOException e) {
            throw LockFile.failure("cannot advance the fencing counter of " + hint, e);
        }
    }

    /** @return the last token issued, or -1 when none was */
    long last() {
        try {
            long h = readHint();
            return h > 0 ? h : -1;
        } catch (IOException e) {
            return -1;
        }
    }

    private boolean tryMove(long n) throws IOException {
        try {
            Files.move(counter(n), counter(n + 1), StandardCopyOption.ATOMIC_MOVE);
            return true;
        } catch (NoSuchFileException e) {
            return false;
        } catch (AtomicMoveNotSupportedException e) {
            throw new LockBackendException("the file system of " + directory + " cannot rename atomically",
                    "use a local file system for the lock directory", e);
        }
    }

    private long readHint() throws IOException {
        try {
            String text = new String(Files.readAllBytes(hint), StandardCharsets.US_ASCII).trim();
            return text.isEmpty() ? 0 : Long.parseLong(text);
        } catch (NoSuchFileException | NumberFormatException e) {
            return 0;
        }
    }

    private void writeHint(long value) throws IOException {
        // One positional write of a fixed-width value: a reader sees the old or the new number.
        try (FileChannel channel = FileChannel.open(hint, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                LinkOption.NOFOLLOW_LINKS)) {
            String digits = Long.toString(value);
            String padded = "0".repeat(Math.max(0, 20 - digits.length())) + digits + "\n";
            channel.write(ByteBuffer.wrap(padded.getBytes(StandardCharsets.US_ASCII)), 0);
        }
    }

    private long findByListing() throws IOException {
        long found = -1;
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory, stem + ".fence.*")) {
            for (Path entry : entries) {
                String suffix = entry.getFileName().toString().substring(stem.length() + ".fence.".length());
                try {
                    found = Math.max(found, Long.parseLong(suffix));
                } catch (NumberFormatException ignored) {
                    // not ours
                }
            }
        }
        return found;
    }
}
