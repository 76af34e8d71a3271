package dev.kanuki.spi;

import java.nio.charset.StandardCharsets;
import java.util.HexFormat;

/**
 * Makes lock names safe where they go. {@link #stem} maps a name to a key that is safe as a file
 * name (and database identifier) everywhere: a readable prefix of the name (letters, digits,
 * {@code . _ -} only, at most 40 characters, never starting with a dot) plus 128 bits of the
 * name's SHA-256. No name can produce a path separator, {@code ..}, a hidden file or a name too
 * long for the file system, and two names that differ only in characters the prefix drops still
 * get different files. {@link #printable} renders a name (or any untrusted text) safely for a
 * message or a terminal.
 */
public final class SafeNames {
    private static final int PREFIX_LENGTH = 40;

    private SafeNames() {
    }

    /**
     * Maps a lock name to a key that is safe as a file name and database identifier.
     *
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
     * Hashes a text into 32 hex digits.
     *
     * @param text any text
     * @return the first 128 bits of its UTF-8 SHA-256, as 32 hex digits
     */
    public static String hash(String text) {
        byte[] digest = Sha256.digest(text.getBytes(StandardCharsets.UTF_8));
        return HexFormat.of().formatHex(digest, 0, 16);
    }

    /**
     * Tells whether a character may be shown on a terminal as it is.
     *
     * @param c a character
     * @return false for characters a terminal may act on rather than show: ASCII and C1 controls
     *     (ESC, CSI), format characters (bidi overrides), line and paragraph separators
     */
    public static boolean isPrintable(char c) {
        int type = Character.getType(c);
        return !(type == Character.CONTROL || type == Character.FORMAT
                || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR);
    }

    /**
     * A form of a name that is safe to print in a message or a terminal: control, format and
     * separator characters are escaped ({@code \x1b}, {@code \u202e}) and long names are cut
     * to 80 characters with an ellipsis.
     *
     * @param name any string, possibly hostile
     * @return a short, printable rendering of it
     */
    public static String printable(String name) {
        if (name == null) {
            return "null";
        }
        StringBuilder out = new StringBuilder();
        int limit = Math.min(name.length(), 80);
        for (int i = 0; i < limit; i++) {
            char c = name.charAt(i);
            if (c < 0x20 || c == 0x7f) {
                out.append(String.format("\\x%02x", (int) c));
            } else if (!isPrintable(c)) {
                out.append(String.format("\\u%04x", (int) c));
            } else {
                out.append(c);
            }
        }
        if (name.length() > limit) {
            out.append("...");
        }
        return out.toString();
    }
}
