package dev.kanuki.park;

import dev.kanuki.spi.ProcessIdentity;
import java.util.HexFormat;

/**
 * Item ids: {@code TIME-PRODUCER}, where TIME is 16 hex digits of microseconds since the epoch,
 * strictly rising within this process (a clock step back continues from the last value), and
 * PRODUCER this process's id. So ids are unique across processes, and one producer's ids sort as
 * strings in the order they were drawn: the spools hand items out sorted by id.
 */
public final class ItemIds {
    /** This process's producer id: its pid and 32 random bits (letters and digits only). */
    public static final String PRODUCER = ProcessIdentity.pid() + "r" + ProcessIdentity.randomId().substring(0, 8);

    private static long last;

    private ItemIds() {
    }

    /** {@return a new id, greater than every id this process drew before} */
    public static synchronized String next() {
        java.time.Instant now = java.time.Instant.now();
        long micros = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000;
        last = Math.max(last + 1, micros);
        return HexFormat.of().toHexDigits(last) + "-" + PRODUCER;
    }

    /**
     * {@return whether a text is an item id as drawn here: 16 hex digits, a dash, then letters and digits}
     *
     * @param text the text
     */
    public static boolean isId(String text) {
        if (text.length() < 18 || text.length() > 80 || text.charAt(16) != '-') {
            return false;
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean ok = i < 16 ? (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')
                    : i == 16 || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z');
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@return the producer part of an id}
     *
     * @param id an id ({@link #isId})
     */
    public static String producer(String id) {
        return id.substring(17);
    }
}
