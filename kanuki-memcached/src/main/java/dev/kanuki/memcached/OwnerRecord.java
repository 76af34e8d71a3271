package dev.kanuki.memcached;

import dev.kanuki.OwnerInfo;
import java.nio.charset.StandardCharsets;
import java.time.Instant;

/**
 * The lock item's value: owner id (128 random bits, unique per acquisition), host, pid,
 * acquisition time (Unix ms) and the lock's name, tab-separated, UTF-8. The name is kept here
 * because the key holds only its digest; {@code status} and {@code list} read it back.
 */
final class OwnerRecord {
    private OwnerRecord() {
    }

    static byte[] encode(OwnerInfo owner, String name) {
        return (owner.id() + "\t" + owner.host() + "\t" + owner.pid() + "\t" + owner.acquiredAt().toEpochMilli()
                + "\t" + name).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * @param value a lock item's value
     * @param leaseUntil when the item expires, or {@code null}
     * @return the owner, or {@code null} when the value is not an owner record (a foreign item)
     */
    static OwnerInfo owner(byte[] value, Instant leaseUntil) {
        String[] f = new String(value, StandardCharsets.UTF_8).split("\t", 5);
        if (f.length != 5) {
            return null;
        }
        try {
            return new OwnerInfo(f[1], Long.parseLong(f[2]), f[0], Instant.ofEpochMilli(Long.parseLong(f[3])), leaseUntil);
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** {@return the lock's name in a value, or {@code null} when it is not an owner record} */
    static String name(byte[] value) {
        String[] f = new String(value, StandardCharsets.UTF_8).split("\t", 5);
        return f.length == 5 ? f[4] : null;
    }
}
