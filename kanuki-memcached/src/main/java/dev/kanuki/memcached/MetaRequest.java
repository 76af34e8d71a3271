package dev.kanuki.memcached;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/**
 * One command: a meta command such as {@code mg KEY c t}, to which the connection appends the
 * {@code O<opaque>} flag that its answer echoes, or a classic text command ({@link #add}), whose
 * answer has no opaque and is paired by its place alone; plus the data block of a store. Keys
 * must not contain spaces or control characters (the backend's keys are hex digests).
 *
 * @param line the command without opaque and without {@code \r\n}
 * @param data the data block of a store, else {@code null}
 * @param meta true for a meta command (it gets an opaque)
 */
record MetaRequest(String line, byte[] data, boolean meta) {

    /** {@return a meta command without data ({@code mg}, {@code md}, {@code ma})} */
    static MetaRequest of(String line) {
        return new MetaRequest(line, null, true);
    }

    /**
     * @param key the item's key
     * @param data the value to store
     * @param flags what follows {@code ms KEY LEN}, e.g. {@code T60}
     * @return a {@code ms} command storing {@code data}
     */
    static MetaRequest set(String key, byte[] data, String flags) {
        return new MetaRequest("ms " + key + " " + data.length + " " + flags, data, true);
    }

    /**
     * The classic {@code add}, answered {@code STORED} or {@code NOT_STORED}. Not meta's
     * {@code ms … ME}: when memcached 1.6.18 has no memory for the new item, a meta store in any
     * mode unlinks the item already there (a holder's lock!), where the text {@code add} leaves it.
     *
     * @param key the item's key
     * @param data the value to store
     * @param ttlSeconds the expiry, seconds (at most 30 days)
     * @return the command
     */
    static MetaRequest add(String key, byte[] data, long ttlSeconds) {
        return new MetaRequest("add " + key + " 0 " + ttlSeconds + " " + data.length, data, false);
    }

    /** Appends this request, with its opaque when it is a meta command, in wire form. */
    void writeTo(ByteArrayOutputStream out, int opaque) {
        out.writeBytes(line.getBytes(StandardCharsets.US_ASCII));
        if (meta) {
            out.write(' ');
            out.write('O');
            out.writeBytes(Integer.toString(opaque).getBytes(StandardCharsets.US_ASCII));
        }
        out.write('\r');
        out.write('\n');
        if (data != null) {
            out.writeBytes(data);
            out.write('\r');
            out.write('\n');
        }
    }

    @Override
    public String toString() {
        return line;
    }
}
