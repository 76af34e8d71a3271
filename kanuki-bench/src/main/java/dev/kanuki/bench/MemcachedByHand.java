package dev.kanuki.bench;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * The least a memcached lock needs, by hand on a plain blocking socket: an add with an expiry
 * that returns the item's CAS ({@code ms KEY LEN T31 ME c}), then a compare-and-delete
 * ({@code md KEY C<cas>}). Two round trips, no fencing token, no owner record to read back, no
 * pipelining, no second thread: the floor {@link MemcachedInterleaved} compares kanuki with.
 */
final class MemcachedByHand implements AutoCloseable {
    private final Socket socket;
    private final OutputStream out;
    private final InputStream in;
    private final byte[] line = new byte[256];

    MemcachedByHand(String host, int port) throws IOException {
        socket = new Socket(host, port);
        socket.setTcpNoDelay(true);
        out = socket.getOutputStream();
        in = new BufferedInputStream(socket.getInputStream());
    }

    /**
     * Takes and gives back one lock.
     *
     * @param key the lock's key
     * @param value the owner record to store
     * @throws IllegalStateException when the lock was taken or the delete found another item
     */
    void addAndDelete(String key, byte[] value) throws IOException {
        ByteArrayOutputStream add = new ByteArrayOutputStream(64 + value.length);
        add.writeBytes(("ms " + key + " " + value.length + " T31 ME c\r\n").getBytes(StandardCharsets.US_ASCII));
        add.writeBytes(value);
        add.writeBytes("\r\n".getBytes(StandardCharsets.US_ASCII));
        out.write(add.toByteArray());
        out.flush();
        String stored = readLine();
        if (!stored.startsWith("HD c")) {
            throw new IllegalStateException("add answered " + stored);
        }
        String cas = stored.substring(4);
        out.write(("md " + key + " C" + cas + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        String deleted = readLine();
        if (!deleted.equals("HD")) {
            throw new IllegalStateException("compare-and-delete answered " + deleted);
        }
    }

    /**
     * kanuki's commands for a holder that asks for no fencing token, by hand: {@code add} +
     * {@code mg c v} in one write, then {@code md C<cas>}. The same work on the server as kanuki's
     * acquire and release, without kanuki's client and engine.
     */
    void sameCommands(String key, byte[] value) throws IOException {
        ByteArrayOutputStream acquire = new ByteArrayOutputStream(128 + value.length);
        acquire.writeBytes(("add " + key + " 0 31 " + value.length + "\r\n").getBytes(StandardCharsets.US_ASCII));
        acquire.writeBytes(value);
        acquire.writeBytes(("\r\nmg " + key + " c v\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(acquire.toByteArray());
        out.flush();
        String stored = readLine();
        if (!stored.equals("STORED")) {
            throw new IllegalStateException("add answered " + stored);
        }
        String item = readLine(); // VA <len> c<cas>
        String cas = item.substring(item.indexOf(" c") + 2);
        skip(Integer.parseInt(item.substring(3, item.indexOf(' ', 3))) + 2);
        out.write(("md " + key + " C" + cas + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.flush();
        String deleted = readLine();
        if (!deleted.equals("HD")) {
            throw new IllegalStateException("compare-and-delete answered " + deleted);
        }
    }

    private void skip(int bytes) throws IOException {
        for (int i = 0; i < bytes; i++) {
            if (in.read() < 0) {
                throw new IOException("memcached closed the connection");
            }
        }
    }

    private String readLine() throws IOException {
        int n = 0;
        int c;
        while ((c = in.read()) != '\n') {
            if (c < 0) {
                throw new IOException("memcached closed the connection");
            }
            line[n++] = (byte) c;
        }
        return new String(line, 0, n > 0 && line[n - 1] == '\r' ? n - 1 : n, StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
