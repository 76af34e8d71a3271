package dev.kanuki.memcached;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One TCP connection to one memcached, shared by every thread of a backend, with requests
 * pipelined: callers write their commands (several at once when they belong together) and wait
 * for their answers. memcached answers a connection's commands in order, so answers complete a
 * FIFO of pending requests. Every meta command carries an {@code O<opaque>} flag that its answer
 * echoes (the one text command used, {@code add}, is answered without one), and each answer is
 * checked against the head of the FIFO: a mismatch means the stream can no longer be trusted, and
 * the connection is closed.
 *
 * <p>Who reads: the callers themselves, one at a time. A caller whose answers are not in yet
 * takes the reading role when it is free and reads until they are, completing the answers of
 * earlier callers on the way; the others wait for their answers or for the role. An uncontended
 * call so costs no thread switch, and the socket stays in blocking mode (one system call per
 * read: a socket timeout would make every read a poll and a read).
 *
 * <p>Deadlines: every call has one, and since reads and writes block without a timeout, a tick
 * on the backend's timer looks at the oldest pending deadline every {@value #TICK_MILLIS} ms: when
 * it has passed, the connection is closed, which ends a blocked read or write (the server may be
 * dead, paused or just slow; the next call opens a fresh connection). A caller that waits for the
 * reading role past its deadline closes it too. So a call ends at most one tick after its
 * deadline. An interrupted caller leaves its answer to be read and dropped: the FIFO stays in step
 * (and a plain socket, unlike a channel, is not closed by an interrupt). Once closed, by failure
 * or by {@link #close()}, a connection fails every pending and later call.
 */
final class MetaConnection implements AutoCloseable {
    static final int TICK_MILLIS = 100;

    private final String server;
    private final Socket socket;
    private final OutputStream out;
    private final ReplyReader reader;
    private final ServerFacts facts;
    private final ReentrantLock writing = new ReentrantLock();
    /** Held by the caller that reads the socket. */
    private final ReentrantLock reading = new ReentrantLock();
    private final ArrayDeque<Pending> pending = new ArrayDeque<>(); // guarded by itself
    private IOException failure; // guarded by pending
    private int nextOpaque; // guarded by writing
    private volatile ScheduledFuture<?> tick;

    private MetaConnection(String server, Socket socket, ReplyReader reader, ServerFacts facts) throws IOException {
        this.server = server;
        this.socket = socket;
        this.out = socket.getOutputStream();
        this.reader = reader;
        this.facts = facts;
    }

    /**
     * Connects, asks the server's {@code stats} and starts the deadline tick.
     *
     * @param address where the server listens
     * @param server the server as written in the URI, for messages
     * @param timer runs the deadline tick (and closes a connection that is not ready in time)
     * @param deadlineNanos when to give up, on the {@link System#nanoTime()} scale
     * @return the open connection
     * @throws IOException when the server cannot be reached or does not answer in time
     */
    static MetaConnection open(InetSocketAddress address, String server, ScheduledExecutorService timer,
                               long deadlineNanos) throws IOException {
        Socket socket = new Socket();
        // Connecting and the first answer block without a timeout (a timeout would take the socket
        // out of blocking mode for good): the timer closes the socket if they take too long.
        ScheduledFuture<?> guard = timer.schedule(() -> closeQuietly(socket),
                Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        try {
            if (address.isUnresolved()) {
                address = new InetSocketAddress(address.getHostString(), address.getPort());
            }
            socket.connect(address);
            socket.setTcpNoDelay(true);
            socket.setKeepAlive(true);
            ReplyReader reader = new ReplyReader(socket.getInputStream()::read);
            long sent = System.nanoTime();
            socket.getOutputStream().write("stats\r\n".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            java.util.Map<String, String> stats = new java.util.HashMap<>();
            for (String line = blockingLine(reader); !line.equals("END"); line = blockingLine(reader)) {
                String[] f = line.split(" ", 3);
                if (f.length != 3 || !f[0].equals("STAT")) {
                    throw new ProtocolException("memcached at " + server + " answered 'stats' with '"
                            + dev.kanuki.spi.SafeNames.printable(line) + "'");
                }
                stats.put(f[1], f[2]);
            }
            ServerFacts facts = ServerFacts.of(server, stats, sent, System.nanoTime());
            if (!guard.cancel(false)) {
                throw new IOException("the socket was closed");
            }
            MetaConnection connection = new MetaConnection(server, socket, reader, facts);
            connection.tick = timer.scheduleWithFixedDelay(connection::failIfOverdue, TICK_MILLIS, TICK_MILLIS,
                    TimeUnit.MILLISECONDS);
            return connection;
        } catch (IOException | RuntimeException e) {
            guard.cancel(false);
            closeQuietly(socket);
            if (System.nanoTime() - deadlineNanos >= 0) {
                throw new DeadlineException("memcached at " + server + " was not reached within the deadline ("
                        + e.getMessage() + ")");
            }
            throw e;
        }
    }

    private static String blockingLine(ReplyReader reader) throws IOException {
        for (String line = reader.pollLine(); ; line = reader.pollLine()) {
            if (line != null) {
                return line;
            }
            reader.fill();
        }
    }

    /** {@return what the server told when this connection was opened} */
    ServerFacts facts() {
        return facts;
    }

    /** {@return false once the connection failed or was closed} */
    boolean isOpen() {
        synchronized (pending) {
            return failure == null;
        }
    }

    /**
     * Sends requests in one write and waits for their answers.
     *
     * @param requests the commands, in order
     * @param deadlineNanos when to give up, on the {@link System#nanoTime()} scale
     * @return one answer per request, in order; error answers ({@code SERVER_ERROR …}) included
     * @throws DeadlineException when the answers did not all come in time (the connection is closed)
     * @throws InterruptedIOException when the caller was interrupted
     * @throws IOException when the connection failed
     */
    List<MetaReply> call(List<MetaRequest> requests, long deadlineNanos) throws IOException {
        List<Pending> mine = new ArrayList<>(requests.size());
        try {
            if (!writing.tryLock(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                throw fail(new DeadlineException("the connection to memcached at " + server
                        + " stayed busy past the deadline"));
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting to write to memcached at " + server);
        }
        try {
            ByteArrayOutputStream bytes = new ByteArrayOutputStream(128 * requests.size());
            for (MetaRequest request : requests) {
                int opaque = nextOpaque++ & Integer.MAX_VALUE;
                request.writeTo(bytes, opaque);
                mine.add(new Pending(opaque, request, deadlineNanos));
            }
            synchronized (pending) {
                if (failure != null) {
                    throw new IOException(failure.getMessage(), failure);
                }
                pending.addAll(mine);
            }
            bytes.writeTo(out); // one write of the buffer, no copy
        } catch (IOException e) {
            throw fail(e);
        } finally {
            writing.unlock();
        }
        CompletableFuture<MetaReply> last = mine.get(mine.size() - 1).answer;
        try {
            while (!last.isDone()) {
                long left = deadlineNanos - System.nanoTime();
                if (left <= 0 || !reading.tryLock(left, TimeUnit.NANOSECONDS)) {
                    break; // the await below reports the deadline
                }
                try {
                    readUntil(last);
                } finally {
                    reading.unlock();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for memcached at " + server);
        }
        List<MetaReply> replies = new ArrayList<>(mine.size());
        for (Pending p : mine) {
            replies.add(await(p, deadlineNanos));
        }
        return replies;
    }

    /**
     * Reads answers and completes pending requests until {@code last} is done; the caller holds
     * {@link #reading}. A failure closes the connection (the pending requests, the caller's too,
     * fail with it); the caller then learns it from its answers.
     */
    private void readUntil(CompletableFuture<MetaReply> last) {
        try {
            while (!last.isDone()) {
                MetaReply reply = reader.pollReply();
                if (reply == null) {
                    reader.fill();
                } else {
                    complete(reply);
                }
            }
        } catch (IOException e) {
            fail(e);
        } catch (RuntimeException e) {
            fail(new IOException("reading from memcached at " + server + " failed: " + e, e));
        }
    }

    /** Completes the head of the FIFO with {@code reply}, after checking that it answers it. */
    private void complete(MetaReply reply) throws ProtocolException {
        Pending head;
        synchronized (pending) {
            head = pending.poll();
        }
        if (head == null) {
            throw new ProtocolException("memcached at " + server + " sent an answer nobody asked for: " + reply);
        }
        String opaque = reply.flag('O');
        // error lines and text answers carry no opaque: they answer the head by their place alone
        boolean paired = reply.isError() || !head.request.meta()
                ? opaque == null : Integer.toString(head.opaque).equals(opaque);
        if (!paired) {
            throw new ProtocolException("memcached at " + server + " answered " + reply + " where the answer to '"
                    + head.request + " O" + head.opaque + "' was due");
        }
        head.answer.complete(reply);
    }

    private MetaReply await(Pending p, long deadlineNanos) throws IOException {
        try {
            return p.answer.get(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
        } catch (TimeoutException e) {
            throw fail(new DeadlineException("memcached at " + server + " did not answer '" + p.request
                    + "' within the deadline"));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for memcached at " + server);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof DeadlineException d) {
                throw new DeadlineException(d.getMessage());
            }
            throw new IOException(cause.getMessage(), cause);
        }
    }

    /** The tick: closes the connection when the oldest pending answer is overdue. */
    private void failIfOverdue() {
        Pending head;
        synchronized (pending) {
            head = pending.peek();
        }
        if (head != null && System.nanoTime() - head.deadlineNanos > 0) {
            fail(new DeadlineException("memcached at " + server + " did not answer '" + head.request
                    + "' within the deadline"));
        }
    }

    /**
     * Closes the connection for good and fails every pending answer with {@code cause} (the first
     * failure wins).
     *
     * @return the failure, to throw
     */
    private IOException fail(IOException cause) {
        List<Pending> dropped;
        synchronized (pending) {
            if (failure != null) {
                return cause;
            }
            failure = cause;
            dropped = new ArrayList<>(pending);
            pending.clear();
        }
        ScheduledFuture<?> t = tick;
        if (t != null) {
            t.cancel(false);
        }
        closeQuietly(socket);
        for (Pending p : dropped) {
            p.answer.completeExceptionally(cause);
        }
        return cause;
    }

    @Override
    public void close() {
        fail(new IOException("the connection to memcached at " + server + " was closed"));
    }

    /**
     * Reads one line with a socket timeout, on a connection of its own (listing), where a timeout
     * costs nothing that matters.
     */
    static String readLine(Socket socket, ReplyReader reader, long deadlineNanos, String server) throws IOException {
        while (true) {
            String line = reader.pollLine();
            if (line != null) {
                return line;
            }
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                throw new DeadlineException("memcached at " + server + " did not answer within the deadline");
            }
            socket.setSoTimeout((int) Math.max(1, Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(left))));
            try {
                reader.fill();
            } catch (SocketTimeoutException e) {
                throw new DeadlineException("memcached at " + server + " did not answer within the deadline");
            }
        }
    }

    static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // closing is all we wanted
        }
    }

    /** A command waiting for its answer. */
    private record Pending(int opaque, MetaRequest request, long deadlineNanos, CompletableFuture<MetaReply> answer) {
        Pending(int opaque, MetaRequest request, long deadlineNanos) {
            this(opaque, request, deadlineNanos, new CompletableFuture<>());
        }
    }

    /** A command's deadline passed before its answer came. */
    static final class DeadlineException extends IOException {
        private static final long serialVersionUID = 1L;

        DeadlineException(String message) {
            super(message);
        }
    }
}
