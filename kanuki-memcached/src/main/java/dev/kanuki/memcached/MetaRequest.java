package dev.kanuki.memcached;

import java.nio.charset.StandardCharsets;

/**
 * One meta-protocol command: a line such as {@code ms KEY 42 T31 ME c} and, for {@code ms}, its
 * data block. The connection appends the {@code O<opaque>} flag and the line ends; keys must not
 * contain spaces or control characters (the backend's keys are hex digests).
 *
 * @param line the command without opaque and without {@code \r\n}
 * @param data the data block of {@code ms}, else {@code null}
 */
record MetaRequest(String line, byte[] data) {

    /** @return a command without data ({@code mg}, {@code md}, {@code ma}, {@code mn}) */
    static MetaRequest of(String line) {
        return new MetaRequest(line, null);
    }

    /**
     * @param key the item's key
     * @param data the value to store
     * @param flags what follows {@code ms KEY LEN}, e.g. {@code T31 ME c}
     * @return a {@code ms} command storing {@code data}
     */
    static MetaRequest set(String key, byte[] data, String flags) {
        return new MetaRequest("ms " + key + " " + data.length + " " + flags, data);
    }

    /** Appends this request, with its opaque, in wire form. */
    void writeTo(java.io.ByteArrayOutputStream out, int opaque) {
        out.writeBytes(line.getBytes(StandardCharsets.US_ASCII));
        out.writeBytes((" O" + opaque + "\r\n").getBytes(StandardCharsets.US_ASCII));
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
