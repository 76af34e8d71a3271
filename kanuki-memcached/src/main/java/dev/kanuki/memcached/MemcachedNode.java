package dev.kanuki.memcached;

import dev.kanuki.LockBackendException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One memcached server of a backend: its pipelined connection, opened on first use and again
 * after a failure, and the translation of every failure into a {@link LockBackendException} that
 * names the server. Each call gets the backend's {@code timeout} as its deadline, connecting
 * included.
 */
final class MemcachedNode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(MemcachedNode.class);
    private static final String HINT = "check that memcached 1.6 or later runs there and is reachable";

    private final String server;
    private final InetSocketAddress address;
    private final long timeoutNanos;
    private final ReentrantLock connecting = new ReentrantLock();
    private volatile MetaConnection connection;
    private volatile boolean closed;
    /** Deadline ticks of the connection, and the guard of a connection being opened. */
    private final ScheduledThreadPoolExecutor timer;
    private final java.util.concurrent.atomic.AtomicLong roundTrips = new java.util.concurrent.atomic.AtomicLong();

    /**
     * @param host the host name or address
     * @param port the TCP port
     * @param timeout every call's deadline
     */
    MemcachedNode(String host, int port, Duration timeout) {
        this.server = (host.contains(":") ? "[" + host + "]" : host) + ":" + port;
        this.address = InetSocketAddress.createUnresolved(host, port);
        this.timeoutNanos = timeout.toNanos();
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "kanuki-memcached-timer-" + server);
            t.setDaemon(true);
            return t;
        });
        timer.setRemoveOnCancelPolicy(true);
    }

    /** {@return the server as {@code host:port} (the name on the hash ring and in messages)} */
    String server() {
        return server;
    }

    /** Answers to one call, and which server process gave them. */
    record Exchange(List<MetaReply> replies, ServerFacts facts) {
        MetaReply get(int i) {
            return replies.get(i);
        }
    }

    /**
     * Sends the requests {@code build} makes for the connection's server (it may look at the
     * server's incarnation and clock; an empty list sends nothing) and waits for the answers.
     * When a connection opened before this call turns out dead (the server restarted since), the
     * call is made once more on a fresh one: every command the backend sends is safe to repeat
     * (an add finds its own item, a CAS compare fails, a counter skips a number).
     *
     * @return the answers and the facts of the server that gave them
     * @throws LockBackendException when the server cannot be reached or did not answer in time
     */
    Exchange call(Function<ServerFacts, List<MetaRequest>> build) {
        return call(build, Duration.ofNanos(timeoutNanos));
    }

    /**
     * As {@link #call(Function)}, waiting at most {@code limit} (connecting included): an
     * acquisition passes what its caller's deadline leaves ({@link dev.kanuki.spi.LockRequest#callTimeout}).
     */
    Exchange call(Function<ServerFacts, List<MetaRequest>> build, Duration limit) {
        long deadline = System.nanoTime() + Math.min(timeoutNanos, limit.toNanos());
        MetaConnection before = connection;
        boolean reused = before != null && before.isOpen();
        try {
            return exchange(connection(deadline), build, deadline);
        } catch (MetaConnection.DeadlineException | InterruptedIOException e) {
            throw failed(e);
        } catch (IOException e) {
            if (!reused || System.nanoTime() - deadline >= 0) {
                throw failed(e);
            }
            LOG.debug("memcached at {}: the connection failed ({}); trying once on a new one", server, e.toString());
        }
        try {
            return exchange(connection(deadline), build, deadline);
        } catch (IOException e) {
            throw failed(e);
        }
    }

    private Exchange exchange(MetaConnection c, Function<ServerFacts, List<MetaRequest>> build, long deadline)
            throws IOException {
        List<MetaRequest> requests = build.apply(c.facts());
        if (requests.isEmpty()) {
            return new Exchange(List.of(), c.facts());
        }
        roundTrips.incrementAndGet();
        return new Exchange(c.call(requests, deadline), c.facts());
    }

    /** {@return how many writes of requests this node has made (each one round trip), for tests} */
    long roundTrips() {
        return roundTrips.get();
    }

    /** {@return the open connection, opening one when there is none or it failed} */
    private MetaConnection connection(long deadline) throws IOException {
        MetaConnection c = connection;
        if (c != null && c.isOpen()) {
            return c;
        }
        try {
            if (!connecting.tryLock(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                throw new MetaConnection.DeadlineException("connecting to memcached at " + server
                        + " took longer than the deadline");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while connecting to memcached at " + server);
        }
        try {
            if (closed) {
                throw new IOException("the backend was closed");
            }
            c = connection;
            if (c == null || !c.isOpen()) {
                try {
                    c = MetaConnection.open(address, server, timer, deadline);
                } catch (java.util.concurrent.RejectedExecutionException e) {
                    throw new IOException("the backend was closed");
                }
                connection = c;
            }
            return c;
        } finally {
            connecting.unlock();
        }
    }

    /**
     * @param reply an answer
     * @param request what it answers, for the message
     * @return a failure for an error answer ({@code SERVER_ERROR out of memory…}) or an unexpected code
     */
    LockBackendException unexpected(MetaReply reply, String request) {
        String hint = reply.is("SERVER_ERROR") && reply.message().contains("memory")
                ? "memcached is full: give it more memory (-m), or let it evict (without -M)"
                : HINT;
        return new LockBackendException("memcached at " + server + " answered '" + request + "' with " + reply, hint, null);
    }

    private LockBackendException failed(IOException e) {
        String what = e instanceof MetaConnection.DeadlineException ? e.getMessage()
                : "memcached at " + server + " failed: " + e.getMessage();
        if (!what.contains(server)) {
            what = "memcached at " + server + ": " + what;
        }
        return new LockBackendException(what, HINT, e);
    }

    /**
     * Lists the keys starting with {@code prefix}, with {@code lru_crawler metadump hash} on a
     * connection of its own (the dump streams every item of the server; the pipelined connection
     * stays free). It walks the whole cache, so it is for {@code kanuki status}, not for hot paths.
     * The hash table walk, not {@code metadump all}: that one walks the LRU lists and misses, now
     * and then, an item that memcached is moving from one list to another (an item read twice
     * becomes active and moves), as a lock just taken and asked about is. Servers older than the
     * hash walk (which answer {@code BADCLASS}) are walked by LRU.
     *
     * @param prefix the keys wanted
     * @param deadlineNanos when to give up
     * @return the keys found
     * @throws UnsupportedOperationException when the server's LRU crawler is off
     * @throws LockBackendException when the server fails, is busy crawling, or is too slow
     */
    List<String> keysStartingWith(String prefix, long deadlineNanos) {
        List<String> keys = dump("hash", prefix, deadlineNanos);
        return keys != null ? keys : dump("all", prefix, deadlineNanos);
    }

    /** {@return the keys, or {@code null} when the server does not know the mode} */
    private List<String> dump(String mode, String prefix, long deadlineNanos) {
        List<String> keys = new ArrayList<>();
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(address.getHostString(), address.getPort()),
                    (int) Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime())));
            OutputStream out = socket.getOutputStream();
            out.write(("lru_crawler metadump " + mode + "\r\n").getBytes(StandardCharsets.US_ASCII));
            out.flush();
            ReplyReader reader = new ReplyReader(socket.getInputStream()::read);
            while (true) {
                String line = MetaConnection.readLine(socket, reader, deadlineNanos, server);
                if (line.equals("END")) {
                    return keys;
                }
                if (line.startsWith("BADCLASS")) {
                    return null;
                }
                if (line.startsWith("BUSY")) {
                    throw new LockBackendException("memcached at " + server + " is busy crawling its items: " + line,
                            "try again in a moment", null);
                }
                if (line.startsWith("ERROR") || line.startsWith("CLIENT_ERROR") || line.startsWith("SERVER_ERROR")) {
                    throw new UnsupportedOperationException("memcached at " + server + " cannot list its items ("
                            + line + "): its LRU crawler is off (-o no_lru_crawler); ask for names");
                }
                if (line.startsWith("key=")) {
                    int space = line.indexOf(' ');
                    String key = URLDecoder.decode(line.substring(4, space < 0 ? line.length() : space),
                            StandardCharsets.UTF_8);
                    if (key.startsWith(prefix)) {
                        keys.add(key);
                    }
                }
            }
        } catch (IOException e) {
            throw failed(e);
        }
    }

    @Override
    public void close() {
        closed = true;
        MetaConnection c = connection;
        if (c != null) {
            c.close();
        }
        timer.shutdownNow();
    }

    @Override
    public String toString() {
        return server;
    }
}
