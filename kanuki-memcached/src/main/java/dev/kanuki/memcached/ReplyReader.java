package dev.kanuki.memcached;

import java.io.EOFException;
import java.io.IOException;
import java.net.ProtocolException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;

/**
 * Reads memcached's answers from a socket's stream. Parsing only ever consumes complete answers,
 * so a read that times out ({@code SO_TIMEOUT}) in the middle of one loses nothing: the reader
 * thread uses such timeouts as its clock tick.
 */
final class ReplyReader {
    /** An answer line longer than this is not memcached talking: give up on the connection. */
    private static final int MAX_LINE = 64 * 1024;
    /** memcached's largest item is 1 MB by default; allow its largest configurable page and more. */
    private static final int MAX_VALUE = 128 * 1024 * 1024;

    /** The answers of the classic storage commands, which the backend uses for {@code add}. */
    private static final java.util.Set<String> TEXT_ANSWERS = java.util.Set.of("STORED", "NOT_STORED", "EXISTS",
            "NOT_FOUND");

    /** Where the bytes come from: a socket's stream ({@code in::read}). */
    interface Source {
        /** {@return bytes read into {@code b} at {@code off}, at least one, or -1 at the end} */
        int read(byte[] b, int off, int len) throws IOException;
    }

    private final Source in;
    private byte[] buffer = new byte[16 * 1024];
    private int start;
    private int end;

    ReplyReader(Source in) {
        this.in = in;
    }

    /**
     * Reads what the socket has (at least one byte).
     *
     * @throws java.net.SocketTimeoutException when nothing came within the socket's timeout;
     *     nothing buffered is lost
     * @throws EOFException when the server closed the connection
     */
    void fill() throws IOException {
        if (start == end) {
            start = 0;
            end = 0;
        } else if (end == buffer.length) {
            if (start > 0) {
                System.arraycopy(buffer, start, buffer, 0, end - start);
                end -= start;
                start = 0;
            } else {
                buffer = Arrays.copyOf(buffer, buffer.length * 2);
            }
        }
        int n = in.read(buffer, end, buffer.length - end);
        if (n < 0) {
            throw new EOFException("the server closed the connection");
        }
        end += n;
    }

    /**
     * @return the next line without its {@code \n} (and {@code \r}), or {@code null} when no whole
     *     line is buffered yet
     * @throws ProtocolException when a line grows past any answer memcached sends
     */
    String pollLine() throws ProtocolException {
        int newline = indexOfNewline();
        if (newline < 0) {
            return null;
        }
        String line = ascii(start, newline);
        start = newline + 1;
        return line;
    }

    /**
     * @return the next whole meta answer (a {@code VA} answer with its value) or text storage answer
     *     ({@code STORED}…), or {@code null} when it is not all buffered yet; error lines ({@code CLIENT_ERROR …}) come back as answers with
     *     that code and the message as their only flag
     * @throws ProtocolException when the stream is not meta protocol
     */
    MetaReply pollReply() throws ProtocolException {
        int newline = indexOfNewline();
        if (newline < 0) {
            return null;
        }
        String line = ascii(start, newline);
        if (line.startsWith("CLIENT_ERROR") || line.startsWith("SERVER_ERROR") || line.equals("ERROR")) {
            start = newline + 1;
            int space = line.indexOf(' ');
            return new MetaReply(space < 0 ? line : line.substring(0, space),
                    new String[] {space < 0 ? "" : line.substring(space + 1)}, null);
        }
        if (TEXT_ANSWERS.contains(line)) {
            start = newline + 1;
            return new MetaReply(line, new String[0], null);
        }
        String[] tokens = line.isEmpty() ? new String[0] : line.split(" ");
        if (tokens.length == 0 || tokens[0].length() != 2) {
            throw new ProtocolException("not a meta protocol answer: '" + printable(line) + "'");
        }
        if (!tokens[0].equals("VA")) {
            start = newline + 1;
            return new MetaReply(tokens[0], Arrays.copyOfRange(tokens, 1, tokens.length), null);
        }
        int size;
        try {
            size = Integer.parseInt(tokens.length > 1 ? tokens[1] : "");
        } catch (NumberFormatException e) {
            throw new ProtocolException("a VA answer without a size: '" + printable(line) + "'");
        }
        if (size < 0 || size > MAX_VALUE) {
            throw new ProtocolException("a VA answer of " + size + " bytes");
        }
        int dataStart = newline + 1;
        if (end - dataStart < size + 2) {
            return null; // the value is still on its way
        }
        if (buffer[dataStart + size] != '\r' || buffer[dataStart + size + 1] != '\n') {
            throw new ProtocolException("a VA value of " + size + " bytes is not followed by \\r\\n");
        }
        byte[] value = Arrays.copyOfRange(buffer, dataStart, dataStart + size);
        start = dataStart + size + 2;
        return new MetaReply("VA", Arrays.copyOfRange(tokens, 2, tokens.length), value);
    }

    private int indexOfNewline() throws ProtocolException {
        for (int i = start; i < end; i++) {
            if (buffer[i] == '\n') {
                return i;
            }
        }
        if (end - start > MAX_LINE) {
            throw new ProtocolException("no line end in " + (end - start) + " bytes");
        }
        return -1;
    }

    private String ascii(int from, int newline) {
        int to = newline > from && buffer[newline - 1] == '\r' ? newline - 1 : newline;
        return new String(buffer, from, to - from, StandardCharsets.ISO_8859_1);
    }

    private static String printable(String line) {
        return dev.kanuki.spi.SafeNames.printable(line);
    }
}
