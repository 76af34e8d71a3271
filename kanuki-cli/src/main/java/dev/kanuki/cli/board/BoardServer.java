package dev.kanuki.cli.board;

import dev.kanuki.LockProvider;
import dev.kanuki.Spools;
import dev.kanuki.servlet.LockingFilter;
import dev.kanuki.servlet.RequestKey;
import dev.kanuki.spi.WorkSpool;
import jakarta.servlet.DispatcherType;
import java.io.PrintStream;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;
import org.eclipse.jetty.ee10.servlet.ServletHolder;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;

/**
 * {@code kanuki demo board} on an embedded Jetty 12: the {@link Board} behind a
 * {@link LockingFilter} keyed by the form's one-time token, so that a double-clicked submit runs
 * once at a time (the second, while the first runs, is answered 409; after it, the board finds
 * the token posted). Only {@code demo board} loads this class, and with it Jetty.
 */
public final class BoardServer implements AutoCloseable {
    private final Server server;
    private final LockProvider locks;
    private final URI url;

    private BoardServer(Server server, LockProvider locks, URI url) {
        this.server = server;
        this.locks = locks;
        this.url = url;
    }

    /**
     * Starts a board on 127.0.0.1.
     *
     * @param port the port; 0 picks a free one
     * @param backend the lock backend's URI, or null for {@code --lock none}
     * @param data the posts' file; its directory is created when missing
     * @return the running board; close it to stop it
     * @throws Exception when the port is taken, the backend cannot be opened, or Jetty fails
     */
    public static BoardServer start(int port, String backend, Path data) throws Exception {
        return start(port, backend, data, false);
    }

    /**
     * Starts a board on 127.0.0.1.
     *
     * @param port the port; 0 picks a free one
     * @param backend the lock backend's URI, or null for {@code --lock none}
     * @param data the posts' file; its directory is created when missing
     * @param park true ({@code --when-busy park}): a post that finds the lock busy is parked in a
     *     spool (the backend's own, else the directory {@code FILE.spool}) for the holder, and
     *     answered at once; false: it waits for the lock
     * @return the running board; close it to stop it
     * @throws Exception when the port is taken, the backend cannot be opened, or Jetty fails
     * @throws IllegalArgumentException when {@code park} is asked for without a backend
     */
    public static BoardServer start(int port, String backend, Path data, boolean park) throws Exception {
        if (park && backend == null) {
            throw new IllegalArgumentException("--when-busy park needs the lock: it cannot be used with --lock none");
        }
        Path file = data.toAbsolutePath();
        if (file.getParent() != null) {
            Files.createDirectories(file.getParent());
        }
        LockProvider locks = backend == null ? null : LockProvider.open(backend);
        try {
            Board board = new Board(file, locks == null ? null : locks.lock("kanuki-board " + file),
                    park ? spool(locks, file) : null);
            // Posts a holder that died left parked: applied now if the lock is free, else by its holder.
            board.drain();
            Server server = new Server();
            ServerConnector connector = new ServerConnector(server);
            connector.setHost("127.0.0.1");
            connector.setPort(port);
            server.addConnector(connector);
            ServletContextHandler context = new ServletContextHandler("/");
            context.addServlet(new ServletHolder(new BoardServlet(board, locks != null)), "/");
            if (locks != null) {
                LockingFilter filter = LockingFilter.builder(locks).key(RequestKey.parameter("token"))
                        .prefix("kanuki-board " + file).build();
                context.addFilter(new FilterHolder(filter), "/post", EnumSet.of(DispatcherType.REQUEST));
            }
            server.setHandler(context);
            server.setStopAtShutdown(true);
            try {
                server.start();
            } catch (java.io.IOException e) {
                server.stop();
                throw new java.io.IOException("cannot listen on 127.0.0.1:" + port + " (" + e.getMessage()
                        + "); give another --port, or 0 for a free one", e);
            }
            return new BoardServer(server, locks, URI.create("http://127.0.0.1:" + connector.getLocalPort() + "/"));
        } catch (Exception | Error e) {
            if (locks != null) {
                locks.close();
            }
            throw e;
        }
    }

    /** @return the backend's own spool when it keeps one (Redis), else the directory {@code FILE.spool} */
    private static WorkSpool spool(LockProvider locks, Path file) {
        try {
            return locks.spool();
        } catch (UnsupportedOperationException e) {
            return Spools.directory(file.resolveSibling(file.getFileName() + ".spool"));
        }
    }

    /**
     * Runs a board until the JVM is stopped, after printing {@code kanuki board: URL} on {@code out}.
     *
     * @param port the port; 0 picks a free one
     * @param backend the lock backend's URI, or null for {@code --lock none}
     * @param data the posts' file
     * @param out where the URL line goes
     * @return 0 when the server stopped
     * @throws Exception when the board cannot start
     */
    public static int serve(int port, String backend, Path data, PrintStream out) throws Exception {
        return serve(port, backend, data, false, out);
    }

    /**
     * Runs a board until the JVM is stopped, after printing {@code kanuki board: URL} on {@code out}.
     *
     * @param port the port; 0 picks a free one
     * @param backend the lock backend's URI, or null for {@code --lock none}
     * @param data the posts' file
     * @param park true to park posts that find the lock busy ({@code --when-busy park})
     * @param out where the URL line goes
     * @return 0 when the server stopped
     * @throws Exception when the board cannot start
     */
    public static int serve(int port, String backend, Path data, boolean park, PrintStream out) throws Exception {
        try (BoardServer board = start(port, backend, data, park)) {
            out.println("kanuki board: " + board.url());
            out.flush();
            board.server.join();
            return 0;
        }
    }

    /** @return the board's address, {@code http://127.0.0.1:PORT/} */
    public URI url() {
        return url;
    }

    /** Stops the server and closes the lock backend. */
    @Override
    public void close() throws Exception {
        try {
            server.stop();
        } finally {
            if (locks != null) {
                locks.close();
            }
        }
    }
}
