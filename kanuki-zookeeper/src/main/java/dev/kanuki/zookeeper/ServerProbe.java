package dev.kanuki.zookeeper;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.time.Duration;

/**
 * Tells a refused connection from a slow one. The ZooKeeper client retries a refused connection
 * quietly, once a second, for as long as it is asked to wait; so opening a provider on a port
 * where nothing listens would wait out its whole timeout. One plain TCP connection per server
 * says at once whether anything listens there.
 */
final class ServerProbe {
    private ServerProbe() {
    }

    /**
     * @param connectString {@code host:port[,host:port...]}, hosts possibly in brackets (IPv6)
     * @param limit how long one connection attempt may take
     * @return true when every server refused a TCP connection (nothing listens on any of them)
     */
    static boolean everyServerRefuses(String connectString, Duration limit) {
        for (String server : connectString.split(",")) {
            int colon = server.lastIndexOf(':');
            String host = server.substring(0, colon).replace("[", "").replace("]", "");
            int port = Integer.parseInt(server.substring(colon + 1));
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress(host, port), Math.toIntExact(Math.min(limit.toMillis(), 1000)));
                return false; // something listens: the client's own wait decides
            } catch (ConnectException e) {
                // refused (or unreachable at once): look at the next
            } catch (IOException | RuntimeException e) {
                return false; // slow or unresolvable: not a refusal
            }
        }
        return true;
    }
}
