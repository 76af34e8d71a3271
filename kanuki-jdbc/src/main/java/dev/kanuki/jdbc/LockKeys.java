package dev.kanuki.jdbc;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.function.ToLongFunction;

/**
 * Maps lock names to what the database locks and stores.
 *
 * <ul>
 *   <li>{@code recordId}: 64 hex digits of SHA-256 of the name (with a namespace: locks and
 *       semaphore permits never share one); the primary key of the owner record. Names of up
 *       to 1024 characters in any script would not fit a b-tree index, their digest does.</li>
 *   <li>{@code key}: PostgreSQL's advisory lock key, the digest's first 64 bits, used as the
 *       two-int form {@code pg_advisory_lock(int, int)} so that kanuki's keys live apart from
 *       applications that lock single {@code bigint} keys. 64 bits can collide: see
 *       {@link SqlLockBackend} for how a collision is detected and why it stays safe.</li>
 *   <li>{@code serverName}: the MySQL/MariaDB {@code GET_LOCK} name, at most 64 characters
 *       (MySQL's limit): {@code kanuki:} + 40 hex digits (160 bits) of SHA-256 of the database
 *       and the name + {@code :} + a readable prefix. {@code GET_LOCK} names are server-wide;
 *       the database in the digest keeps two databases' locks apart, as PostgreSQL does.</li>
 * </ul>
 */
final class LockKeys {
    private static final int READABLE = 16;

    /** What one lock name (or one permit of a semaphore) maps to. */
    record LockKey(String name, String recordId, long key, String serverName) {
        int keyHigh() {
            return (int) (key >>> 32);
        }

        int keyLow() {
            return (int) key;
        }
    }

    private final String database;
    private final ToLongFunction<String> keyOverride;

    /**
     * @param database the database the locks live in (scopes MySQL's server-wide lock names)
     * @param keyOverride for tests only: forces advisory keys (to provoke collisions), or null
     */
    LockKeys(String database, ToLongFunction<String> keyOverride) {
        this.database = database;
        this.keyOverride = keyOverride;
    }

    /** {@return the keys of an exclusive or read-write lock} */
    LockKey lock(String name) {
        return make(name, "L");
    }

    /** {@return the keys of one permit of a semaphore} */
    LockKey permit(String name, int slot) {
        return make(name, "S" + slot);
    }

    private LockKey make(String name, String namespace) {
        byte[] digest = sha256(namespace + "\u0000" + name);
        String recordId = HexFormat.of().formatHex(digest);
        long key = keyOverride != null && namespace.equals("L") ? keyOverride.applyAsLong(name)
                : ByteBuffer.wrap(digest).getLong();
        String server = "kanuki:" + HexFormat.of().formatHex(sha256(database + "\u0000" + namespace + "\u0000" + name), 0, 20)
                + ":" + readable(name);
        return new LockKey(name, recordId, key, server);
    }

    private static String readable(String name) {
        StringBuilder out = new StringBuilder(READABLE);
        for (int i = 0; i < name.length() && out.length() < READABLE; i++) {
            char c = name.charAt(i);
            boolean safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '_' || c == '-' || c == '.' || c == '/';
            out.append(safe ? c : '_');
        }
        return out.toString();
    }

    private static byte[] sha256(String text) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(text.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
