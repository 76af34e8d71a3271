package dev.kanuki.file;

import dev.kanuki.OwnerInfo;
import java.net.URLDecoder;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.zip.CRC32C;

/**
 * The owner record of a ttl lock entry (mkdir, symlink, rename, create, queue), as one line of
 * text so that it can also be a symbolic link's target:
 *
 * <pre>
 * K1 &lt;id&gt; &lt;pid&gt; &lt;acquired ms&gt; &lt;lease-until ms&gt; &lt;host&gt; &lt;url-encoded lock name&gt; [&lt;fencing token&gt;] &lt;crc32c&gt;
 * </pre>
 *
 * The fencing token is there once the holder has taken it (it is taken after the entry exists).
 *
 * The checksum covers everything before it, so a reader that catches a write halfway, or an
 * entry someone damaged, gets "corrupted" rather than a wrong owner. The special record
 * {@link #FREE} marks a rename-strategy token that is not held.
 */
record TtlRecord(String id, long pid, long acquiredMillis, long leaseUntilMillis, String host, String lockName,
                 long token) {
    static final String FREE = "K1 free";

    TtlRecord(String id, long pid, long acquiredMillis, long leaseUntilMillis, String host, String lockName) {
        this(id, pid, acquiredMillis, leaseUntilMillis, host, lockName, 0);
    }

    /** What reading an entry's record found. */
    enum Kind { VALID, FREE_MARK, CORRUPTED }

    /** A decoded record, or why there is none. */
    record Read(Kind kind, TtlRecord record, String problem) {
    }

    static TtlRecord of(OwnerInfo owner, long leaseUntilMillis, String lockName) {
        return new TtlRecord(owner.id(), owner.pid(), owner.acquiredAt().toEpochMilli(), leaseUntilMillis,
                owner.host(), lockName);
    }

    TtlRecord withLeaseUntil(long millis) {
        return new TtlRecord(id, pid, acquiredMillis, millis, host, lockName, token);
    }

    TtlRecord withToken(long fencingToken) {
        return new TtlRecord(id, pid, acquiredMillis, leaseUntilMillis, host, lockName, fencingToken);
    }

    OwnerInfo owner() {
        return new OwnerInfo(host, pid, id, Instant.ofEpochMilli(acquiredMillis), Instant.ofEpochMilli(leaseUntilMillis));
    }

    String encode() {
        String head = "K1 " + id + " " + pid + " " + acquiredMillis + " " + leaseUntilMillis + " "
                + host.replaceAll("[\\s\\p{Cntrl}]", "_") + " " + URLEncoder.encode(lockName, StandardCharsets.UTF_8)
                + (token > 0 ? " " + token : "");
        return head + " " + crc(head);
    }

    static Read decode(String text) {
        String t = text.strip();
        if (t.equals(FREE)) {
            return new Read(Kind.FREE_MARK, null, null);
        }
        int lastSpace = t.lastIndexOf(' ');
        if (!t.startsWith("K1 ") || lastSpace < 0) {
            return corrupted(t.isEmpty() ? "empty record (still being written, or truncated)" : "not a kanuki record");
        }
        String head = t.substring(0, lastSpace);
        if (!t.substring(lastSpace + 1).equals(crc(head))) {
            return corrupted("checksum mismatch (torn write or damage)");
        }
        String[] f = head.split(" ");
        if (f.length != 7 && f.length != 8) {
            return corrupted("wrong number of fields");
        }
        try {
            TtlRecord record = new TtlRecord(f[1], Long.parseLong(f[2]), Long.parseLong(f[3]),
                    Long.parseLong(f[4]), f[5], URLDecoder.decode(f[6], StandardCharsets.UTF_8),
                    f.length == 8 ? Long.parseLong(f[7]) : 0);
            record.owner(); // validates the host name
            return new Read(Kind.VALID, record, null);
        } catch (RuntimeException e) {
            return corrupted("unreadable field: " + e.getMessage());
        }
    }

    private static Read corrupted(String why) {
        return new Read(Kind.CORRUPTED, null, why);
    }

    private static String crc(String text) {
        CRC32C crc = new CRC32C();
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        crc.update(bytes, 0, bytes.length);
        return java.util.HexFormat.of().toHexDigits((int) crc.getValue());
    }
}
