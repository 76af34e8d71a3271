package dev.kanuki.faults;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** Floods a cache server with items over its plain protocol until it must evict. */
final class Fillers {
    private static int next;

    private Fillers() {
    }

    /** memcached: items of many sizes (every slab class the lock item may share), each read twice. */
    static void memcached(String host, int port) throws IOException {
        ByteArrayOutputStream batch = new ByteArrayOutputStream();
        for (int size = 1; size <= 300; size += 13) {
            String value = "v".repeat(size);
            for (int i = 0; i < 200; i++) {
                String key = "kanuki.faults.fill." + (next++);
                batch.writeBytes(("set " + key + " 0 0 " + size + " noreply\r\n" + value + "\r\n"
                        + "mg " + key + " v q\r\nmg " + key + " v q\r\n").getBytes(StandardCharsets.US_ASCII));
            }
        }
        batch.writeBytes("mn\r\n".getBytes(StandardCharsets.US_ASCII));
        send(host, port, batch.toByteArray(), "MN\r\n");
    }

    /** Redis: sets maxmemory 2 MB with allkeys-lru, then writes 6 MB of 1 KB values. */
    static void redis(String host, int port) throws IOException {
        ByteArrayOutputStream batch = new ByteArrayOutputStream();
        resp(batch, "CONFIG", "SET", "maxmemory-policy", "allkeys-lru");
        resp(batch, "CONFIG", "SET", "maxmemory", "2mb");
        String value = "v".repeat(1024);
        for (int i = 0; i < 6000; i++) {
            resp(batch, "SET", "kanuki:faults:fill:" + (next++), value);
        }
        resp(batch, "PING");
        send(host, port, batch.toByteArray(), "+PONG\r\n");
    }

    private static void resp(ByteArrayOutputStream out, String... words) {
        StringBuilder s = new StringBuilder("*" + words.length + "\r\n");
        for (String w : words) {
            s.append('$').append(w.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(w).append("\r\n");
        }
        out.writeBytes(s.toString().getBytes(StandardCharsets.UTF_8));
    }

    private static void send(String host, int port, byte[] bytes, String end) throws IOException {
        try (Socket s = new Socket(host, port)) {
            s.setSoTimeout(30_000);
            Thread writer = new Thread(() -> {
                try {
                    OutputStream out = s.getOutputStream();
                    out.write(bytes);
                    out.flush();
                } catch (IOException e) {
                    // the read below fails too
                }
            }, "kanuki-faults-filler");
            writer.setDaemon(true);
            writer.start();
            InputStream in = s.getInputStream();
            byte[] buffer = new byte[64 * 1024];
            StringBuilder tail = new StringBuilder();
            for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                tail.append(new String(buffer, 0, n, StandardCharsets.US_ASCII));
                if (tail.length() > 64) {
                    tail.delete(0, tail.length() - 64);
                }
                if (tail.toString().endsWith(end)) {
                    return;
                }
            }
        }
    }
}
