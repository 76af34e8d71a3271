package dev.kanuki;

import java.util.Objects;

/**
 * The rules every lock name follows, on every backend: a non-empty string of at most
 * {@value #MAX_LENGTH} UTF-16 characters, with no NUL character and no unpaired surrogate.
 * Any other character is allowed (slashes, dots, spaces, any script): backends map names to
 * safe keys, so a name can never reach outside the backend's namespace.
 */
public final class LockNames {
    /** The longest name accepted, in UTF-16 characters. */
    public static final int MAX_LENGTH = 1024;

    private LockNames() {
    }

    /**
     * Checks a lock name.
     *
     * @param name the name to check
     * @return the same name
     * @throws NullPointerException when {@code name} is null
     * @throws IllegalArgumentException when the name is empty, too long, contains NUL or an
     *     unpaired surrogate; the message says which and where
     */
    public static String validate(String name) {
        Objects.requireNonNull(name, "lock name");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("lock name is empty; give a name such as 'reports' or 'user/42'");
        }
        if (name.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("lock name is " + name.length()
                    + " characters long; the limit is " + MAX_LENGTH + " (name starts with '"
                    + printable(name) + "')");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '\0') {
                throw new IllegalArgumentException("lock name '" + printable(name)
                        + "' contains a NUL character at index " + i + "; NUL is not allowed in lock names");
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
                    i++;
                    continue;
                }
                throw new IllegalArgumentException("lock name '" + printable(name)
                        + "' contains an unpaired surrogate at index " + i);
            }
            if (Character.isLowSurrogate(c)) {
                throw new IllegalArgumentException("lock name '" + printable(name)
                        + "' contains an unpaired surrogate at index " + i);
            }
        }
        return name;
    }

    /**
     * @param c a character
     * @return true for characters a terminal may act on rather than show: C1 controls (CSI),
     *     format characters (bidi overrides), line and paragraph separators
     */
    static boolean isInvisible(char c) {
        int type = Character.getType(c);
        return type == Character.CONTROL || type == Character.FORMAT
                || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR;
    }

    /**
     * A form of the name that is safe to print in a message or a terminal: control, format and
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
            } else if (isInvisible(c)) {
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
