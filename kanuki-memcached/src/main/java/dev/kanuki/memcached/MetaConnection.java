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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One TCP connection to one memcached, shared by every thread of a backend, with requests
 * pipelined: callers write their commands (several at once when they belong together) and wait
 * for their answers; memcached answers a connection's commands in order, so one reader thread
 * completes a FIFO of pending answers. Every command carries an {@code O<opaque>} flag that its
 * answer echoes (the one text command used, {@code add}, is answered without one), and the reader
 * checks each answer against the head of the FIFO: a mismatch means the stream can no longer be
 * trusted, and the connection is closed.
 *
 * <p>Deadlines: every call has one. A caller whose answer does not come in time closes the
 * connection (it cannot tell a dead or paused server from a slow one; the next call opens a fresh
 * connection), and so do the reader, which wakes every {@value #TICK_MILLIS} ms to look at the
 * oldest pending deadline (this ends a write blocked on a full socket buffer too), and a writer
 * that cannot get the connection in time. An interrupted caller leaves its answer to be read and
 * dropped: the FIFO stays in step. Once closed, by failure or by {@link #close()}, a connection
 * fails every pending and later call.
 */
final class MetaConnection implements AutoCloseable {
    private static final int TICK_MILLIS = 200;

    private final String server;
    private final Socket socket;
    private final OutputStream out;
    private final ReplyReader reader;
    private final ServerFacts facts;
    private final ReentrantLock writing = new ReentrantLock();
    private final ArrayDeque<Pending> pending = new ArrayDeque<>(); // guarded by itself
    private IOException failure; // guarded by pending
    private int nextOpaque; // guarded by writing

    private MetaConnection(String server, Socket socket, ReplyReader reader, ServerFacts facts) throws IOException {
        this.server = server;
        this.socket = socket;
        this.out = socket.getOutputStream();
        this.reader = reader;
        this.facts = facts;
    }

    /**
     * Connects, asks the server's {@code stats} and starts the reader thread.
     *
     * @param address where the server listens
     * @param server the server as written in the URI, for messages
     * @param deadlineNanos when to give up, on the {@link System#nanoTime()} scale
     * @return the open connection
     * @throws IOException when the server cannot be reached or does not answer in time
     */
    static MetaConnection open(InetSocketAddress address, String server, long deadlineNanos) throws IOException {
        Socket socket = new Socket();
        try {
            if (address.isUnresolved()) {
                address = new InetSocketAddress(address.getHostString(), address.getPort());
            }
            socket.connect(address, Math.max(1, millisLeft(deadlineNanos, server)));
            socket.setTcpNoDelay(true);
            socket.setKeepAlive(true);
            ReplyReader reader = new ReplyReader(socket.getInputStream());
            ServerFacts facts = ServerFacts.ask(server, socket, reader, deadlineNanos);
            MetaConnection connection = new MetaConnection(server, socket, reader, facts);
            Thread thread = new Thread(connection::readAnswers, "kanuki-memcached-" + server);
            thread.setDaemon(true);
            thread.start();
            return connection;
        } catch (IOException | RuntimeException e) {
            closeQuietly(socket);
            throw e;
        }
    }

    /** @return what the server told when this connection was opened */
    ServerFacts facts() {
        return facts;
    }

    /** @return false once the connection failed or was closed */
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
            out.write(bytes.toByteArray());
            out.flush();
        } catch (IOException e) {
            throw fail(e);
        } finally {
            writing.unlock();
        }
        List<MetaReply> replies = new ArrayList<>(mine.size());
        for (Pending p : mine) {
            replies.add(await(p, deadlineNanos));
        }
        return replies;
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

    /** The reader thread: completes pending answers in order until the connection fails. */
    private void readAnswers() {
        try {
            socket.setSoTimeout(TICK_MILLIS);
            while (true) {
                MetaReply reply = reader.pollReply();
                if (reply == null) {
                    try {
                        reader.fill();
                    } catch (SocketTimeoutException tick) {
                        failIfOverdue();
                    }
                    continue;
                }
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
        } catch (IOException e) {
            fail(e);
        } catch (RuntimeException e) {
            fail(new IOException("reading from memcached at " + server + " failed: " + e, e));
        }
    }

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
     * Reads one line with a deadline, before the reader thread runs (the {@code stats} at open)
     * or on a connection of its own (listing).
     */
    static String readLine(Socket socket, ReplyReader reader, long deadlineNanos, String server) throws IOException {
        while (true) {
            String line = reader.pollLine();
            if (line != null) {
                return line;
            }
            socket.setSoTimeout(Math.max(1, millisLeft(deadlineNanos, server)));
            try {
                reader.fill();
            } catch (SocketTimeoutException e) {
                throw new DeadlineException("memcached at " + server + " did not answer within the deadline");
            }
        }
    }

    private static int millisLeft(long deadlineNanos, String server) throws DeadlineException {
        long left = deadlineNanos - System.nanoTime();
        if (left <= 0) {
            throw new DeadlineException("no time left to reach memcached at " + server);
        }
        return (int) Math.min(Integer.MAX_VALUE, Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
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
