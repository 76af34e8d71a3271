package dev.kanuki.redis;

import dev.kanuki.spi.LockMode;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * The keys of one lock name. Any name (any Unicode, spaces, braces, 1024 characters) maps to
 * short, safe keys under {@code kanuki:{DIGEST}:}: {@code lock} (the exclusive holder),
 * {@code shared} (readers), {@code permits} (semaphore holders), {@code intent} (a writer waiting
 * for readers to leave), {@code fence} (the token counter), {@code queue} (the line of exclusive
 * waiters, see {@link Scripts#RELEASE}), and the channels {@code released}
 * and {@code permit-released}; DIGEST is the base64url SHA-256 of the name's UTF-8 bytes. The
 * digest is the hash tag, so a cluster keeps a name's keys in one slot; the real name is kept in
 * the values for status and list.
 */
record RedisKeys(String lock, String fence, String shared, String permits, String intent, String queue,
        String channel, String permitChannel) {
    static final String PREFIX = "kanuki:{";
    static final String LOCK_SUFFIX = "}:lock";
    static final String SHARED_SUFFIX = "}:shared";

    static RedisKeys of(String name) {
        String tag = PREFIX + digest(name) + "}";
        return new RedisKeys(tag + ":lock", tag + ":fence", tag + ":shared", tag + ":permits", tag + ":intent",
                tag + ":queue", tag + ":released", tag + ":permit-released");
    }

    /** {@return the keys the acquisition script takes, in its order} */
    String[] forAcquire() {
        return new String[] {lock, fence, shared, permits, intent, queue};
    }

    /** {@return the keys an exclusive release, and a waiter leaving the line, take: lock, fence, queue} */
    String[] forHandOver() {
        return new String[] {lock, fence, queue};
    }

    /** {@return the key a grant of this mode lives in} */
    String holderKey(LockMode mode) {
        return switch (mode) {
            case EXCLUSIVE -> lock;
            case SHARED -> shared;
            case PERMIT -> permits;
        };
    }

    /** {@return the channel a release of this mode publishes on: semaphores apart from the lock} */
    String channel(LockMode mode) {
        return mode == LockMode.PERMIT ? permitChannel : channel;
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
