package dev.kanuki.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The test kit's memcached: its own port, options, stop, restart on the same port, pause. */
@Tag("servers")
class MemcachedServerTest {

    /** Sends one text-protocol line and returns the first line of the answer. */
    private static String ask(MemcachedServer server, String line, int timeoutMillis) throws IOException {
        try (Socket socket = new Socket(server.host(), server.port())) {
            socket.setSoTimeout(timeoutMillis);
            socket.getOutputStream().write((line + "\r\n").getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            StringBuilder answer = new StringBuilder();
            int c;
            while ((c = in.read()) >= 0 && c != '\n') {
                answer.append((char) c);
            }
            return answer.toString().strip();
        }
    }

    @Test
    void startsOnItsOwnPortSurvivesStopAndRestartAndPauses() throws Exception {
        try (MemcachedServer mc = MemcachedServer.start()) {
            assertNotEquals(11211, mc.port(), "the system's server port");
            assertEquals("memcached://127.0.0.1:" + mc.port(), mc.kanukiUri());
            assertEquals("HD", ask(mc, "ms kept 1 T0\r\nx", 10_000));
            int port = mc.port();
            mc.stop();
            assertFalse(mc.isRunning());
            assertThrows(IOException.class, () -> ask(mc, "version", 2000));
            mc.restart();
            assertEquals(port, mc.port(), "a restart keeps the port");
            assertEquals("EN", ask(mc, "mg kept v", 10_000), "memcached keeps nothing across a restart");

            mc.pause();
            try {
                assertThrows(SocketTimeoutException.class, () -> ask(mc, "version", 500), "a paused server answers");
            } finally {
                mc.resume();
            }
            assertTrue(ask(mc, "version", 10_000).startsWith("VERSION 1."));
            mc.kill();
            assertFalse(mc.isRunning());
            mc.close();
            assertFalse(Files.exists(mc.directory()), "close removes the directory");
        }
    }

    @Test
    void memoryAndNoEvictionOptionsReachTheServer() throws Exception {
        try (MemcachedServer mc = MemcachedServer.start(3, true)) {
            assertEquals("STAT limit_maxbytes " + 3 * 1024 * 1024, statLine(mc, "limit_maxbytes"));
            assertEquals("STAT evictions off", settingLine(mc, "evictions"));
        }
    }

    private static String statLine(MemcachedServer mc, String name) throws IOException {
        return lineOf(mc, "stats", name);
    }

    private static String settingLine(MemcachedServer mc, String name) throws IOException {
        return lineOf(mc, "stats settings", name);
    }

    private static String lineOf(MemcachedServer mc, String command, String name) throws IOException {
        try (Socket socket = new Socket(mc.host(), mc.port())) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write((command + "\r\n").getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            StringBuilder all = new StringBuilder();
            byte[] buffer = new byte[4096];
            while (all.indexOf("END\r\n") < 0) {
                int n = in.read(buffer);
                if (n < 0) {
                    break;
                }
                all.append(new String(buffer, 0, n, StandardCharsets.US_ASCII));
            }
            return all.toString().lines().filter(l -> l.startsWith("STAT " + name + " ")).findFirst().orElse("");
        }
    }

    @Test
    void sharedServerIsShared() {
        assertSame(MemcachedServer.shared(), MemcachedServer.shared());
    }
}
