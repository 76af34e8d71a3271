package dev.kanuki.redis;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * The keys of one lock name. Any name (any Unicode, spaces, braces, 1024 characters) maps to
 * short, safe keys: {@code kanuki:{DIGEST}:lock}, {@code kanuki:{DIGEST}:fence} and the channel
 * {@code kanuki:{DIGEST}:released}, DIGEST being the base64url SHA-256 of the name's UTF-8 bytes.
 * The digest is the hash tag, so a cluster keeps a name's keys in one slot; the real name is kept
 * in the lock's value for status and list.
 */
record RedisKeys(String lock, String fence, String channel) {
    static final String PREFIX = "kanuki:{";
    static final String LOCK_SUFFIX = "}:lock";

    static RedisKeys of(String name) {
        String tag = PREFIX + digest(name) + "}";
        return new RedisKeys(tag + ":lock", tag + ":fence", tag + ":released");
    }

    static String digest(String name) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(name.getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder().withoutPadding().encodeToString(hash);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from this JVM", e);
        }
    }
}
