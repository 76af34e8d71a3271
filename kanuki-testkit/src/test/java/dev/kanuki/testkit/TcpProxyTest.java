package dev.kanuki.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link TcpProxy} against a small echo server of its own: forwards, stalls, resumes, resets. */
class TcpProxyTest {
    private ServerSocket echo;

    @BeforeEach
    void startEcho() throws IOException {
        echo = new ServerSocket(0, 50, InetAddress.getByName("127.0.0.1"));
        Thread t = new Thread(() -> {
            while (!echo.isClosed()) {
                try {
                    Socket s = echo.accept();
                    Thread c = new Thread(() -> {
                        try (s) {
                            s.getInputStream().transferTo(s.getOutputStream());
                        } catch (IOException e) {
                            // reset
                        }
                    });
                    c.setDaemon(true);
                    c.start();
                } catch (IOException e) {
                    return;
                }
            }
        });
        t.setDaemon(true);
        t.start();
    }

    @AfterEach
    void stopEcho() throws IOException {
        echo.close();
    }

    private static String roundTrip(Socket s, String text) throws IOException {
        OutputStream out = s.getOutputStream();
        out.write(text.getBytes(StandardCharsets.UTF_8));
        out.flush();
        InputStream in = s.getInputStream();
        byte[] answer = in.readNBytes(text.length());
        return new String(answer, StandardCharsets.UTF_8);
    }

    @Test
    void forwardsStallsResumesAndResets() throws Exception {
        try (TcpProxy proxy = TcpProxy.to("127.0.0.1", echo.getLocalPort());
             Socket s = new Socket(proxy.host(), proxy.port())) {
            s.setSoTimeout(10_000);
            assertEquals("hello", roundTrip(s, "hello"));
            assertEquals(1, proxy.openConnections());

            proxy.stall();
            s.setSoTimeout(500);
            s.getOutputStream().write("held".getBytes(StandardCharsets.UTF_8));
            assertThrows(SocketTimeoutException.class, () -> s.getInputStream().read(), "bytes went through a stalled proxy");
            assertTrue(s.isConnected() && !s.isClosed());

            proxy.resume();
            s.setSoTimeout(10_000);
            assertEquals("held", new String(s.getInputStream().readNBytes(4), StandardCharsets.UTF_8));

            proxy.resetAll();
            IOException reset = assertThrows(IOException.class, () -> {
                for (int i = 0; i < 100; i++) { // the first write after an RST may still be buffered
                    roundTrip(s, "after");
                }
            });
            assertTrue(reset.getMessage() != null, reset.toString());
            Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> proxy.openConnections() == 0);

            try (Socket again = new Socket(proxy.host(), proxy.port())) { // new connections still work
                again.setSoTimeout(10_000);
                assertEquals("again", roundTrip(again, "again"));
            }
        }
    }
}
