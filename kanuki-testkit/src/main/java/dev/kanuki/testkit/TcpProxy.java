package dev.kanuki.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A small TCP proxy for fault tests: listens on a free port of 127.0.0.1 and forwards every
 * connection to a server, byte for byte, until told otherwise.
 *
 * <pre>{@code
 * try (TcpProxy proxy = TcpProxy.to("127.0.0.1", redis.port())) {
 *     LockProvider locks = LockProvider.open("redis://127.0.0.1:" + proxy.port());
 *     proxy.stall();    // bytes stop flowing both ways; every socket stays open
 *     proxy.resume();   // the bytes held back flow again
 *     proxy.resetAll(); // every connection is reset (RST), as a dead middlebox or a firewall would
 * }
 * }</pre>
 *
 * <p>A stalled proxy still accepts new connections (and connects them to the server), but forwards
 * nothing on them until {@link #resume()}. One thread per direction of a connection.
 */
public final class TcpProxy implements AutoCloseable {
    private final ServerSocket listener;
    private final InetSocketAddress target;
    private final List<Socket[]> connections = new CopyOnWriteArrayList<>();
    private final Set<Thread> threads = ConcurrentHashMap.newKeySet();
    /** With {@link #resumed}: where forwarding threads wait out a stall (a lock, not a monitor: kanuki never waits holding a monitor). */
    private final ReentrantLock gate = new ReentrantLock();
    private final Condition resumed = gate.newCondition();
    private volatile boolean stalled;
    private volatile boolean closed;

    private TcpProxy(String host, int port) throws IOException {
        this.target = new InetSocketAddress(host, port);
        this.listener = new ServerSocket(0, 50, InetAddress.getByName(ServerProcess.HOST));
        Thread acceptor = new Thread(this::acceptLoop, "kanuki-tcp-proxy-accept-" + listener.getLocalPort());
        acceptor.setDaemon(true);
        threads.add(acceptor);
        acceptor.start();
    }

    /**
     * Starts a proxy to {@code host:port}.
     *
     * @param host the server's address
     * @param port the server's port
     * @return a running proxy on a free loopback port
     */
    public static TcpProxy to(String host, int port) {
        try {
            return new TcpProxy(host, port);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open a proxy port on " + ServerProcess.HOST, e);
        }
    }

    /** {@return the port the proxy listens on, on 127.0.0.1} */
    public int port() {
        return listener.getLocalPort();
    }

    /** {@return {@code 127.0.0.1}} */
    public String host() {
        return ServerProcess.HOST;
    }

    /** {@return the number of connections open through the proxy} */
    public int openConnections() {
        return connections.size();
    }

    /** Stops forwarding bytes in both directions; every socket stays open. */
    public void stall() {
        stalled = true;
    }

    /** Forwards again after {@link #stall()}, the bytes held back first. */
    public void resume() {
        gate.lock();
        try {
            stalled = false;
            resumed.signalAll();
        } finally {
            gate.unlock();
        }
    }

    /** {@return true while {@link #stall() stalled}} */
    public boolean isStalled() {
        return stalled;
    }

    /** Resets every open connection, on both sides: {@code SO_LINGER 0} then close sends RST. */
    public void resetAll() {
        for (Socket[] pair : connections) {
            reset(pair);
        }
    }

    private void reset(Socket[] pair) {
        connections.remove(pair);
        for (Socket s : pair) {
            try {
                s.setSoLinger(true, 0);
            } catch (SocketException e) {
                // already closed
            }
            closeQuietly(s);
        }
    }

    /** Stops listening and resets every connection. Idempotent. */
    @Override
    public void close() {
        closed = true;
        closeQuietly(listener);
        resume();
        resetAll();
    }

    private void acceptLoop() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            Socket server = new Socket();
            try {
                client.setTcpNoDelay(true);
                server.setTcpNoDelay(true);
                server.connect(target, 10_000);
            } catch (IOException e) {
                closeQuietly(server);
                try {
                    client.setSoLinger(true, 0);
                } catch (SocketException ignored) {
                    // closed
                }
                closeQuietly(client);
                continue;
            }
            Socket[] pair = {client, server};
            connections.add(pair);
            pump(pair, client, server, "up");
            pump(pair, server, client, "down");
        }
    }

    private void pump(Socket[] pair, Socket from, Socket to, String direction) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[16 * 1024];
            boolean clean = false;
            try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                    awaitNotStalled();
                    out.write(buffer, 0, n);
                    out.flush();
                }
                to.shutdownOutput(); // a clean end on one side is a clean end on the other
                clean = true;
            } catch (IOException | InterruptedException e) {
                // reset or closed: end both sides below
            }
            if (!clean || from.isOutputShutdown()) { // an error, or both directions ended
                connections.remove(pair);
                closeQuietly(pair[0]);
                closeQuietly(pair[1]);
            }
            threads.remove(Thread.currentThread());
        }, "kanuki-tcp-proxy-" + direction + "-" + port());
        t.setDaemon(true);
        threads.add(t);
        t.start();
    }

    private void awaitNotStalled() throws InterruptedException {
        gate.lock();
        try {
            while (stalled && !closed) {
                resumed.await(100, TimeUnit.MILLISECONDS);
            }
        } finally {
            gate.unlock();
        }
    }

    private static void closeQuietly(AutoCloseable c) {
        try {
            c.close();
        } catch (Exception e) {
            // nothing to do
        }
    }

    @Override
    public String toString() {
        return "TcpProxy[" + ServerProcess.HOST + ":" + port() + " -> " + target.getHostString() + ":" + target.getPort()
                + (stalled ? ", stalled" : "") + "]";
    }
}
