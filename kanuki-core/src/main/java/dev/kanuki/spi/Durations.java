package dev.kanuki.spi;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.Locale;

/**
 * Durations as kanuki writes and reads them: {@code 500ms}, {@code 5s}, {@code 2m}, {@code 1h},
 * or a plain number of seconds as {@code flock(1)} takes it ({@code 5}, {@code 0.25}).
 */
public final class Durations {
    private Durations() {
    }

    /**
     * Parses a duration.
     *
     * @param text for example {@code 250ms}, {@code 5s}, {@code 1.5s}, {@code 2m}, {@code 1h}, {@code 10}
     * @return the duration
     * @throws IllegalArgumentException when the text is not a non-negative duration in one of those forms
     */
    public static Duration parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("empty duration; write e.g. 500ms, 5s, 2m or a number of seconds");
        }
        String t = text.trim().toLowerCase(Locale.ROOT);
        String number;
        long unitNanos;
        if (t.endsWith("ms")) {
            number = t.substring(0, t.length() - 2);
            unitNanos = 1_000_000L;
        } else if (t.endsWith("us")) {
            number = t.substring(0, t.length() - 2);
            unitNanos = 1_000L;
        } else if (t.endsWith("s")) {
            number = t.substring(0, t.length() - 1);
            unitNanos = 1_000_000_000L;
        } else if (t.endsWith("m")) {
            number = t.substring(0, t.length() - 1);
            unitNanos = 60_000_000_000L;
        } else if (t.endsWith("h")) {
            number = t.substring(0, t.length() - 1);
            unitNanos = 3_600_000_000_000L;
        } else {
            number = t;
            unitNanos = 1_000_000_000L;
        }
        try {
            BigDecimal value = new BigDecimal(number.trim());
            if (value.signum() < 0) {
                throw new IllegalArgumentException("negative duration '" + text + "'");
            }
            BigDecimal nanos = value.multiply(BigDecimal.valueOf(unitNanos));
            if (nanos.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
                throw new IllegalArgumentException("duration '" + text + "' is too long");
            }
            return Duration.ofNanos(nanos.longValue());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("cannot read duration '" + text
                    + "'; write e.g. 500ms, 5s, 2m, 1h or a number of seconds");
        }
    }

    /**
     * Formats a duration the way {@link #parse} reads it, choosing a readable unit.
     *
     * @param d a duration
     * @return for example {@code 500ms}, {@code 5s}, {@code 1.5s}, {@code 2m}
     */
    public static String format(Duration d) {
        if (d == null) {
            return "forever";
        }
        long nanos;
        try {
            nanos = d.toNanos();
        } catch (ArithmeticException e) {
            return "forever";
        }
        if (nanos >= 3_600_000_000_000_000L) {
            return "forever";
        }
        if (nanos % 60_000_000_000L == 0 && nanos >= 60_000_000_000L) {
            return (nanos / 60_000_000_000L) + "m";
        }
        if (nanos >= 1_000_000_000L) {
            return BigDecimal.valueOf(nanos, 9).stripTrailingZeros().toPlainString() + "s";
        }
        if (nanos >= 1_000_000L || nanos == 0) {
            return BigDecimal.valueOf(nanos, 6).stripTrailingZeros().toPlainString() + "ms";
        }
        return BigDecimal.valueOf(nanos, 3).stripTrailingZeros().toPlainString() + "us";
    }
}
