package dev.kanuki.spi;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * Maps lock names to keys that are safe as file names (and database identifiers) everywhere: a readable prefix of the
 * name (letters, digits, {@code . _ -} only, at most 40 characters, never starting with a dot)
 * plus 128 bits of the name's SHA-256. No name can produce a path separator, {@code ..}, a
 * hidden file or a name too long for the file system, and two names that differ only in
 * characters the prefix drops still get different files.
 */
public final class SafeNames {
    private static final int PREFIX_LENGTH = 40;

    private SafeNames() {
    }

    /**
     * @param name a validated lock name
     * @param namespace separates kinds of keys for the same name, e.g. {@code "L"} for locks and
     *     {@code "S"} for semaphores
     * @return e.g. {@code reports_2026.3f2a...9c} (no extension), at most 73 characters
     */
    public static String stem(String name, String namespace) {
        StringBuilder prefix = new StringBuilder(PREFIX_LENGTH);
        for (int i = 0; i < name.length() && prefix.length() < PREFIX_LENGTH; i++) {
            char c = name.charAt(i);
            boolean safe = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || c == '_' || c == '-' || (c == '.' && prefix.length() > 0);
            prefix.append(safe ? c : '_');
        }
        return prefix + "." + hash(namespace + "\u0000" + name);
    }

    /**
     * @param text any text
     * @return the first 128 bits of its UTF-8 SHA-256, as 32 hex digits
     */
    public static String hash(String text) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            byte[] digest = sha.digest(text.getBytes(StandardCharsets.UTF_8));
            return HexFormat.of().formatHex(digest, 0, 16);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is missing from this JVM", e);
        }
    }
}
