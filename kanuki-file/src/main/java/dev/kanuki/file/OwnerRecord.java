package dev.kanuki.file;

import dev.kanuki.OwnerInfo;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HexFormat;
import java.util.zip.CRC32C;

/**
 * The record kept at the start of a lock file: the last fencing token issued for the name and
 * who holds (or last held) the lock. It is {@link #SIZE} bytes, written with one positional
 * write, and ends in a CRC-32C, so a reader that catches a write halfway, or a file someone
 * damaged, sees "corrupted", never a wrong owner or token.
 *
 * <pre>
 *   0  8  magic "KNKLOCK1"
 *   8  8  fencing token
 *  16  8  owner pid
 *  24  8  acquired at, epoch milliseconds
 *  32  8  lease until, epoch milliseconds, or -1 for a session lease
 *  40 16  owner id (128 random bits)
 *  56  2  host name length n (at most 64)
 *  58  n  host name, UTF-8
 * 124  4  CRC-32C of bytes 0..123
 * 128  4  lock name length m (bytes), then m bytes of the name, UTF-8 (for listing)
 * </pre>
 */
record OwnerRecord(long token, OwnerInfo owner) {
    static final int SIZE = 128;
    private static final byte[] MAGIC = "KNKLOCK1".getBytes(StandardCharsets.US_ASCII);
    private static final int CRC_AT = 124;
    private static final int MAX_HOST = 64;

    /** Result of reading a lock file's record. */
    enum Kind { EMPTY, VALID, CORRUPTED }

    /** A parsed record, or why there is none. */
    record Read(Kind kind, OwnerRecord record, String problem) {
        static final Read EMPTY_FILE = new Read(Kind.EMPTY, null, null);
    }

    /** {@return a buffer big enough for the record followed by a name of that many bytes} */
    static ByteBuffer buffer(int nameBytes) {
        return ByteBuffer.allocate(SIZE + 4 + nameBytes);
    }

    /** Writes the record, then the lock name, into {@code out} from position 0, and flips it. */
    void encode(ByteBuffer out, byte[] name) {
        encode(out, token, owner, owner.leaseUntil() == null ? -1 : owner.leaseUntil().toEpochMilli(), name);
    }

    /** The hot path of the os strategy: no intermediate objects. */
    static void encode(ByteBuffer out, long token, OwnerInfo owner, long leaseUntilMillis, byte[] name) {
        out.clear();
        out.put(MAGIC);
        out.putLong(token);
        out.putLong(owner.pid());
        out.putLong(owner.acquiredAt().toEpochMilli());
        out.putLong(leaseUntilMillis);
        putId(out, owner.id());
        byte[] host = hostBytes(owner.host());
        int hostLength = Math.min(host.length, MAX_HOST);
        out.putShort((short) hostLength);
        out.put(host, 0, hostLength);
        while (out.position() < CRC_AT) {
            out.put((byte) 0);
        }
        CRC32C crc = new CRC32C();
        crc.update(out.array(), out.arrayOffset(), CRC_AT);
        out.putInt((int) crc.getValue());
        out.putInt(name.length);
        out.put(name);
        out.flip();
    }

    /** Puts 16 bytes parsed from 32 hex digits (ids from ProcessIdentity); anything else puts zeros. */
    private static void putId(ByteBuffer out, String hex) {
        for (int i = 0; i < 16; i++) {
            int hi = 2 * i < hex.length() ? Character.digit(hex.charAt(2 * i), 16) : -1;
            int lo = 2 * i + 1 < hex.length() ? Character.digit(hex.charAt(2 * i + 1), 16) : -1;
            out.put(hi < 0 || lo < 0 ? 0 : (byte) (hi << 4 | lo));
        }
    }

    private static volatile String cachedHost = "";
    private static volatile byte[] cachedHostBytes = new byte[0];

    /** This process writes the same host name every time: encode it once. */
    private static byte[] hostBytes(String host) {
        if (host.equals(cachedHost)) {
            return cachedHostBytes;
        }
        byte[] bytes = host.getBytes(StandardCharsets.UTF_8);
        cachedHostBytes = bytes;
        cachedHost = host;
        return bytes;
    }

    /**
     * Reads only the token, checking magic and checksum: the hot path of taking a lock.
     *
     * @return the token, {@link #NO_RECORD} for a new (empty) file, {@link #DAMAGED} otherwise
     */
    static long token(ByteBuffer data, int length) {
        if (length <= 0) {
            return NO_RECORD;
        }
        if (length < SIZE) {
            return DAMAGED;
        }
        byte[] a = data.array();
        int base = data.arrayOffset();
        for (int i = 0; i < MAGIC.length; i++) {
            if (a[base + i] != MAGIC[i]) {
                return DAMAGED;
            }
        }
        CRC32C crc = new CRC32C();
        crc.update(a, base, CRC_AT);
        if (data.getInt(CRC_AT) != (int) crc.getValue()) {
            return DAMAGED;
        }
        long token = data.getLong(8);
        return token < 0 ? DAMAGED : token;
    }

    static final long NO_RECORD = -1;
    static final long DAMAGED = -2;

    /**
     * @param data a buffer holding what {@link #encode} wrote
     * @param length how many bytes were read
     * @return the lock name stored after the record, or null when absent or damaged
     */
    static String decodeName(ByteBuffer data, int length) {
        if (length < SIZE + 4) {
            return null;
        }
        int n = ByteBuffer.wrap(data.array(), data.arrayOffset(), length).getInt(SIZE);
        if (n < 0 || SIZE + 4 + n > length) {
            return null;
        }
        return new String(data.array(), data.arrayOffset() + SIZE + 4, n, StandardCharsets.UTF_8);
    }

    /**
     * @param data the first bytes of a lock file (array-backed, position 0)
     * @param length how many bytes were read
     * @return the record, or EMPTY for a new file, or CORRUPTED with the reason
     */
    static Read decode(ByteBuffer data, int length) {
        if (length <= 0) {
            return Read.EMPTY_FILE;
        }
        byte[] a = data.array();
        int base = data.arrayOffset();
        if (length < SIZE) {
            return corrupted("record is " + length + " bytes, expected " + SIZE + " (truncated)");
        }
        for (int i = 0; i < MAGIC.length; i++) {
            if (a[base + i] != MAGIC[i]) {
                return corrupted("not a kanuki lock record (bad magic)");
            }
        }
        CRC32C crc = new CRC32C();
        crc.update(a, base, CRC_AT);
        ByteBuffer b = ByteBuffer.wrap(a, base, SIZE).slice();
        if (b.getInt(CRC_AT) != (int) crc.getValue()) {
            return corrupted("checksum mismatch (torn write or damage)");
        }
        long token = b.getLong(8);
        long pid = b.getLong(16);
        long acquired = b.getLong(24);
        long lease = b.getLong(32);
        String id = HexFormat.of().formatHex(a, base + 40, base + 56);
        int hostLength = b.getShort(56);
        if (token < 0 || hostLength < 0 || hostLength > MAX_HOST) {
            return corrupted("field out of range");
        }
        String host = new String(a, base + 58, hostLength, StandardCharsets.UTF_8);
        try {
            OwnerInfo owner = new OwnerInfo(host, pid, id, Instant.ofEpochMilli(acquired),
                    lease < 0 ? null : Instant.ofEpochMilli(lease));
            return new Read(Kind.VALID, new OwnerRecord(token, owner), null);
        } catch (IllegalArgumentException e) {
            return corrupted(e.getMessage());
        }
    }

    private static Read corrupted(String why) {
        return new Read(Kind.CORRUPTED, null, why);
    }
}
