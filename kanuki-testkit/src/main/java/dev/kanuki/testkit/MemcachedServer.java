package dev.kanuki.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A real {@code memcached} for tests, on a free port of 127.0.0.1 (TCP only, no UDP), never the
 * machine's own on 11211. memcached keeps nothing on disk: a {@link #restart()} comes back empty,
 * with CAS values and counters starting again from 1.
 *
 * <pre>{@code
 * try (MemcachedServer memcached = MemcachedServer.start()) {
 *     LockProvider locks = LockProvider.open(memcached.kanukiUri());
 * }
 * MemcachedServer tiny = MemcachedServer.start(2, false); // 2 MB, evicts when full
 * }</pre>
 *
 * <p>Fault injection: {@link #stop()} (SIGTERM), {@link #kill()} (SIGKILL), {@link #restart()}
 * on the same port, {@link #pause()} (SIGSTOP: connections stay open, nothing answers) and
 * {@link #resume()}.
 *
 * <p>The binary is looked up in {@code -Dkanuki.testkit.memcached.bin=DIR}, then
 * {@code /usr/bin}, {@code /usr/local/bin} and {@code PATH}; when missing, {@link #start()}
 * throws a {@link MissingServerException} naming the Debian package {@code memcached}. When the
 * JVM runs as root the server runs as user {@code memcache} (memcached refuses root).
 */
public final class MemcachedServer extends KeyValueServerProcess {
    /** The memory limit of {@link #start()}: memcached's own default. */
    public static final int DEFAULT_MEGABYTES = 64;
    private static final SharedServer<MemcachedServer> SHARED = new SharedServer<>(MemcachedServer::start);
    private final Path binary;
    private final int megabytes;
    private final boolean noEviction;
    private final List<String> options;

    private MemcachedServer(Path binary, int megabytes, boolean noEviction, List<String> options) {
        super("memcached", "memcache");
        this.binary = binary;
        this.megabytes = megabytes;
        this.noEviction = noEviction;
        this.options = List.copyOf(options);
    }

    /**
     * Starts a new server with {@value #DEFAULT_MEGABYTES} MB that evicts when full; the caller
     * owns it: close it when done.
     *
     * @return a running server
     * @throws MissingServerException when memcached is not installed
     */
    public static MemcachedServer start() {
        return start(DEFAULT_MEGABYTES, false);
    }

    /**
     * Starts a new server that the caller owns.
     *
     * @param megabytes the memory for items ({@code -m}); memcached takes at least a few MB
     *     whatever is asked (one 1 MB page per slab class in use)
     * @param noEviction {@code -M}: when memory is full, refuse new items with an error instead of
     *     evicting old ones
     * @return a running server
     * @throws MissingServerException when memcached is not installed
     */
    public static MemcachedServer start(int megabytes, boolean noEviction) {
        return start(megabytes, noEviction, List.of());
    }

    /**
     * Starts a new server that the caller owns, with more of memcached's options.
     *
     * @param megabytes the memory for items ({@code -m})
     * @param noEviction {@code -M}: refuse new items when full instead of evicting
     * @param options more command-line options, e.g. {@code List.of("-t", "1")} for one worker
     *     thread (then every connection is served by the same thread)
     * @return a running server
     * @throws MissingServerException when memcached is not installed
     */
    public static MemcachedServer start(int megabytes, boolean noEviction, List<String> options) {
        if (megabytes < 1) {
            throw new IllegalArgumentException("memory must be at least 1 MB, got " + megabytes);
        }
        MemcachedServer server = new MemcachedServer(findBinary(), megabytes, noEviction, options);
        server.firstStart();
        return server;
    }

    /**
     * The server shared by the tests of this JVM; tests that stop, pause or fill it start their own.
     *
     * @return the running shared server
     */
    public static MemcachedServer shared() {
        return SHARED.get();
    }

    static Path findBinary() {
        List<Path> candidates = new ArrayList<>();
        String configured = System.getProperty("kanuki.testkit.memcached.bin");
        if (configured != null && !configured.isBlank()) {
            candidates.add(Path.of(configured, "memcached"));
        }
        candidates.add(Path.of("/usr/bin/memcached"));
        candidates.add(Path.of("/usr/local/bin/memcached"));
        Path found = findExecutable(candidates);
        if (found == null) {
            found = onPath("memcached");
        }
        if (found == null) {
            throw new MissingServerException("memcached",
                    "looked in -Dkanuki.testkit.memcached.bin, /usr/bin, /usr/local/bin and PATH", "memcached");
        }
        return found;
    }

    /** {@return {@code memcached://127.0.0.1:PORT}} */
    public String kanukiUri() {
        return "memcached://" + address();
    }

    /** {@return {@code 127.0.0.1:PORT}, as memcached clients write a server} */
    public String address() {
        return HOST + ":" + port();
    }

    /** {@return the memory limit in MB ({@code -m})} */
    public int megabytes() {
        return megabytes;
    }

    @Override
    void initialize() {
        // memcached keeps nothing on disk: its directory only holds its output
    }

    @Override
    List<String> serverCommand(int port) {
        List<String> command = new ArrayList<>(List.of(binary.toString(),
                "-l", HOST, "-p", Integer.toString(port), "-U", "0", "-m", Integer.toString(megabytes)));
        if (noEviction) {
            command.add("-M");
        }
        command.addAll(options);
        return command;
    }

    @Override
    Path logFile() {
        return directory.resolve("memcached.out");
    }

    /** memcached logs nothing when it is ready (only with {@code -vv}, which also logs every command). */
    @Override
    String readyMarker() {
        throw new UnsupportedOperationException("memcached is asked through its port: see isReady");
    }

    /**
     * Ready once the port answers {@code stats} with this process's pid: when the port was taken
     * between choosing and binding it, another memcached may answer there while ours exits.
     */
    @Override
    boolean isReady(String logSinceStart) {
        long pid = pid();
        if (pid < 0) {
            return false;
        }
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(HOST, port()), 1000);
            socket.setSoTimeout(1000);
            OutputStream out = socket.getOutputStream();
            out.write("stats\r\n".getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            StringBuilder answer = new StringBuilder();
            byte[] buffer = new byte[4096];
            while (answer.indexOf("END\r\n") < 0) {
                int n = in.read(buffer);
                if (n < 0) {
                    return false;
                }
                answer.append(new String(buffer, 0, n, StandardCharsets.US_ASCII));
            }
            return answer.indexOf("STAT pid " + pid + "\r\n") >= 0;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    void requestFastShutdown(Process process) throws IOException {
        signal(process, "TERM");
    }

    /** {@return the empty string: memcached has no users (no SASL here)} */
    @Override
    public String user() {
        return "";
    }

    @Override
    String productName() {
        return "memcached";
    }

    @Override
    String kanukiScheme() {
        return "memcached";
    }
}
