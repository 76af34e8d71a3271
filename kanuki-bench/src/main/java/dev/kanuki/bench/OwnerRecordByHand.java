package dev.kanuki.bench;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;
import java.util.zip.CRC32C;

/**
 * The fair raw baseline for kanuki's {@code file:} {@code os} strategy: what that strategy does
 * under the OS lock, written by hand with nothing around it. Read the 128-byte record at offset
 * 0, check its magic and CRC-32C, take the next fencing token, write the record back (token,
 * pid, acquired-at, session lease, a fresh random 128-bit owner id, host, CRC-32C) with one
 * positional write. Same layout as kanuki-file's {@code OwnerRecord}, so the byte counts and
 * syscalls match; no fsync, as in kanuki.
 *
 * <p>Not thread-safe: one per thread or process, used only while holding the file's lock.
 */
final class OwnerRecordByHand {
    static final int SIZE = 128;
    private static final byte[] MAGIC = "KNKLOCK1".getBytes(StandardCharsets.US_ASCII);
    private static final int CRC_AT = 124;

    private final ByteBuffer buffer = ByteBuffer.allocate(SIZE);
    private final CRC32C crc = new CRC32C();
    private final long pid = ProcessHandle.current().pid();
    private final byte[] host;

    OwnerRecordByHand() {
        byte[] h = hostName().getBytes(StandardCharsets.UTF_8);
        host = h.length <= 64 ? h : java.util.Arrays.copyOf(h, 64);
    }

    /**
     * Reads the record, writes it back with the next token; call it holding the lock.
     *
     * @param channel the lock file, open for reading and writing
     * @return the new fencing token
     * @throws IOException when the file cannot be read or written, or its record is damaged
     */
    long stamp(FileChannel channel) throws IOException {
        buffer.clear();
        int n = channel.read(buffer, 0);
        long token = 0;
        if (n > 0) {
            if (n < SIZE || !validRecord()) {
                throw new IOException("damaged lock record (" + n + " bytes)");
            }
            token = buffer.getLong(8);
        }
        long next = token + 1;
        ThreadLocalRandom random = ThreadLocalRandom.current();
        buffer.clear();
        buffer.put(MAGIC)
                .putLong(next)
                .putLong(pid)
                .putLong(System.currentTimeMillis())
                .putLong(-1L)
                .putLong(random.nextLong())
                .putLong(random.nextLong())
                .putShort((short) host.length)
                .put(host);
        while (buffer.position() < CRC_AT) {
            buffer.put((byte) 0);
        }
        crc.reset();
        crc.update(buffer.array(), 0, CRC_AT);
        buffer.putInt((int) crc.getValue());
        buffer.flip();
        long at = 0;
        while (buffer.hasRemaining()) {
            at += channel.write(buffer, at);
        }
        return next;
    }

    private boolean validRecord() {
        byte[] a = buffer.array();
        for (int i = 0; i < MAGIC.length; i++) {
            if (a[i] != MAGIC[i]) {
                return false;
            }
        }
        crc.reset();
        crc.update(a, 0, CRC_AT);
        return buffer.getInt(CRC_AT) == (int) crc.getValue();
    }

    private static String hostName() {
        String env = System.getenv("HOSTNAME");
        return env != null && !env.isBlank() ? env.trim() : "localhost";
    }
}
