package dev.kanuki;

import java.text.Normalizer;
import dev.kanuki.spi.SafeNames;
import java.util.Objects;

/**
 * The rules every lock name follows, on every backend: a non-empty string of at most
 * {@value #MAX_LENGTH} UTF-16 characters, with no NUL character and no unpaired surrogate.
 * Any other character is allowed (slashes, dots, spaces, any script): backends map names to
 * safe keys, so a name can never reach outside the backend's namespace.
 *
 * <p>Names are compared in Unicode normalization form C (NFC): canonically equivalent
 * spellings, such as "café" with a precomposed "é" (as typed on Linux) and with "e" plus a
 * combining accent (as macOS file names spell it), name one lock on every backend.
 * {@link #validate} returns the NFC form, and that is the name every lock, status and listing
 * carries.
 */
public final class LockNames {
    /** The longest name accepted, in UTF-16 characters. */
    public static final int MAX_LENGTH = 1024;

    private LockNames() {
    }

    /**
     * Checks a lock name and returns its canonical form.
     *
     * @param name the name to check
     * @return the name in Unicode normalization form C: the same string when it already is
     * @throws NullPointerException when {@code name} is null
     * @throws IllegalArgumentException when the name is empty, too long (before or after
     *     normalization), contains NUL or an unpaired surrogate; the message says which and where
     */
    public static String validate(String name) {
        String checked = check(name);
        String canonical = canonical(checked);
        return canonical == checked ? checked : check(canonical);
    }

    /**
     * @param name a valid name
     * @return its NFC form; the same instance when it is already in NFC
     */
    private static String canonical(String name) {
        for (int i = 0; i < name.length(); i++) {
            // Below U+0300 (the first combining mark) every character is its own NFC form and
            // composes with nothing before it: most names never reach the normalizer.
            if (name.charAt(i) >= 0x300) {
                return Normalizer.isNormalized(name, Normalizer.Form.NFC) ? name
                        : Normalizer.normalize(name, Normalizer.Form.NFC);
            }
        }
        return name;
    }

    private static String check(String name) {
        Objects.requireNonNull(name, "lock name");
        if (name.isEmpty()) {
            throw new IllegalArgumentException("lock name is empty; give a name such as 'reports' or 'user/42'");
        }
        if (name.length() > MAX_LENGTH) {
            throw new IllegalArgumentException("lock name is " + name.length()
                    + " characters long; the limit is " + MAX_LENGTH + " (name starts with '"
                    + SafeNames.printable(name) + "')");
        }
        for (int i = 0; i < name.length(); i++) {
            char c = name.charAt(i);
            if (c == '\0') {
                throw new IllegalArgumentException("lock name '" + SafeNames.printable(name)
                        + "' contains a NUL character at index " + i + "; NUL is not allowed in lock names");
            }
            if (Character.isHighSurrogate(c)) {
                if (i + 1 < name.length() && Character.isLowSurrogate(name.charAt(i + 1))) {
                    i++;
                    continue;
                }
                throw new IllegalArgumentException("lock name '" + SafeNames.printable(name)
                        + "' contains an unpaired surrogate at index " + i);
            }
            if (Character.isLowSurrogate(c)) {
                throw new IllegalArgumentException("lock name '" + SafeNames.printable(name)
                        + "' contains an unpaired surrogate at index " + i);
            }
        }
        return name;
    }
}
