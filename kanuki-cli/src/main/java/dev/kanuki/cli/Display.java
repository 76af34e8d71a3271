package dev.kanuki.cli;

import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.LockUri;
import dev.kanuki.spi.SafeNames;
import java.time.Instant;
import java.util.Locale;

/**
 * How lock details are shown to people: names and hosts that cannot mess up a terminal, short
 * durations, lease text. Names and hosts come from files other users may have written, so they
 * are treated as hostile.
 */
final class Display {
    private Display() {
    }

    /**
     * {@link dev.kanuki.spi.SafeNames#printable} (C0 controls escaped, cut at 80 characters), then
     * {@link #escapeControls}.
     *
     * @param text a lock name or host name, possibly hostile
     * @return a short one-line rendering that is safe to print
     */
    static String safe(String text) {
        return escapeControls(SafeNames.printable(text));
    }

    /**
     * Escapes what a terminal may act on: C0 controls (as {@code \xNN}, like
     * {@link dev.kanuki.spi.SafeNames#printable}), and what that lets through: C1 controls (U+009B is CSI on
     * some terminals), bidi overrides and other invisible format characters, line and paragraph
     * separators, unpaired surrogates (as <code>&#92;uNNNN</code>). For messages that quote lock names or
     * owner records (hosts are read from files, so a planted record could carry escapes).
     *
     * @param text any text
     * @return the same text with those characters escaped, not shortened
     */
    static String escapeControls(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); ) {
            int cp = text.codePointAt(i); // an unpaired surrogate comes back as itself
            int type = Character.getType(cp);
            if (cp < 0x20 || cp == 0x7f) {
                out.append(String.format(Locale.ROOT, "\\x%02x", cp));
            } else if (type == Character.CONTROL || type == Character.FORMAT || type == Character.SURROGATE
                    || type == Character.LINE_SEPARATOR || type == Character.PARAGRAPH_SEPARATOR) {
                out.append(String.format(Locale.ROOT, "\\u%04x", cp));
            } else {
                out.appendCodePoint(cp);
            }
            i += Character.charCount(cp);
        }
        return out.toString();
    }

    /** @return {@code pid@host}, the host made safe to print */
    static String owner(OwnerInfo owner) {
        return owner.pid() + "@" + safe(owner.host());
    }

    /** @return {@code held}, {@code shared}, {@code stale}, {@code free} or {@code unknown} */
    static String state(LockStatus.State state) {
        // By name, so that a state added to LockStatus later still prints (as its name).
        return switch (state.name()) {
            case "HELD_SHARED" -> "shared";
            default -> state.name().toLowerCase(Locale.ROOT);
        };
    }

    /**
     * @param uri a backend URI
     * @return the file backend's strategy ({@code os} when the URI names none), or the scheme
     *     for other backends
     */
    static String strategy(String uri) {
        LockUri parsed = LockUri.parse(uri);
        if (parsed.scheme().equals("file")) {
            return parsed.param("strategy").orElse("os");
        }
        return parsed.scheme();
    }

    /** @return milliseconds from {@code now} until {@code leaseUntil}, negative when past; null for a session lease */
    static Long leaseLeftMillis(OwnerInfo owner, Instant now) {
        return owner.leaseUntil() == null ? null : owner.leaseUntil().toEpochMilli() - now.toEpochMilli();
    }

    /** @return {@code 25s}, {@code expired 3s ago}, or {@code session} */
    static String leaseLeft(Long leftMillis) {
        if (leftMillis == null) {
            return "session";
        }
        return leftMillis >= 0 ? duration(leftMillis) : "expired " + duration(-leftMillis) + " ago";
    }

    /**
     * A short, whole-unit rendering for tables: {@code 850ms}, {@code 12s}, {@code 3m04s},
     * {@code 2h05m}, {@code 3d04h}. Negative values (clocks of two hosts disagreeing) show as 0.
     *
     * @param millis a duration in milliseconds
     * @return its short text
     */
    static String duration(long millis) {
        long ms = Math.max(0, millis);
        if (ms < 1_000) {
            return ms + "ms";
        }
        long s = ms / 1_000;
        if (s < 60) {
            return s + "s";
        }
        if (s < 3_600) {
            return String.format(Locale.ROOT, "%dm%02ds", s / 60, s % 60);
        }
        if (s < 86_400) {
            return String.format(Locale.ROOT, "%dh%02dm", s / 3_600, s % 3_600 / 60);
        }
        return String.format(Locale.ROOT, "%dd%02dh", s / 86_400, s % 86_400 / 3_600);
    }
}
