package dev.kanuki.testkit;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A real {@code redis-server} for tests, on a free port of 127.0.0.1 with its files in a
 * temporary directory and no persistence ({@code --save "" --appendonly no}): a restart loses
 * every key, as on a default Debian install. Never the machine's own Redis on 6379.
 *
 * <pre>{@code
 * try (RedisServer redis = RedisServer.start()) {
 *     LockProvider locks = LockProvider.open(redis.kanukiUri());
 * }
 * }</pre>
 *
 * <p>The binary is looked up in {@code -Dkanuki.testkit.redis.bin=DIR}, then {@code /usr/bin},
 * {@code /usr/local/bin} and {@code PATH}; when missing, {@link #start()} throws a
 * {@link MissingServerException} naming the Debian package {@code redis-server}.
 */
public final class RedisServer extends KeyValueServerProcess {
    private static final SharedServer<RedisServer> SHARED = new SharedServer<>(RedisServer::start);
    private final Path binary;
    private final boolean tls;
    /** For a replica: the port of its primary (on 127.0.0.1) at start; else null. */
    private final String replicaOf;
    /** For a sentinel: the {@code sentinel monitor} line's {@code NAME 127.0.0.1 PORT}; else null. */
    private final String monitors;

    /** For a sentinel: the port of the replica it is told of at start; else 0. */
    private final int knownReplica;

    private RedisServer(Path binary, boolean tls) {
        this(binary, tls, null, null, 0);
    }

    private RedisServer(Path binary, boolean tls, String replicaOf, String monitors, int knownReplica) {
        super(monitors != null ? "redis-sentinel" : "redis", "redis");
        this.binary = binary;
        this.tls = tls;
        this.replicaOf = replicaOf;
        this.monitors = monitors;
        this.knownReplica = knownReplica;
    }

    /** Starts a replica of {@code primary} (for {@link RedisSentinel}). */
    static RedisServer startReplicaOf(RedisServer primary) {
        RedisServer server = new RedisServer(findBinary(), false, Integer.toString(primary.port()), null, 0);
        server.firstStart();
        return server;
    }

    /**
     * Starts {@code redis-server --sentinel} watching {@code primary} as {@code masterName} with a
     * quorum of {@code quorum}, noticing a dead primary after one second, told of {@code replica}
     * at once (else it learns of it from the primary's {@code INFO}, every 10 s) (for {@link RedisSentinel}).
     */
    static RedisServer startSentinel(RedisServer primary, RedisServer replica, String masterName, int quorum) {
        RedisServer server = new RedisServer(findBinary(), false, null,
                masterName + " " + HOST + " " + primary.port() + " " + quorum, replica.port());
        server.firstStart();
        return server;
    }

    /**
     * Starts a new server that speaks only TLS, with a self-signed certificate for 127.0.0.1
     * made by {@code openssl}; see {@link #kanukiUri()} for the URI that trusts it.
     *
     * @return a running server
     * @throws MissingServerException when redis-server is not installed
     */
    public static RedisServer startTls() {
        RedisServer server = new RedisServer(findBinary(), true);
        server.firstStart();
        return server;
    }

    /**
     * Starts a new server that the caller owns: close it when done.
     *
     * @return a running server
     * @throws MissingServerException when redis-server is not installed
     */
    public static RedisServer start() {
        RedisServer server = new RedisServer(findBinary(), false);
        server.firstStart();
        return server;
    }

    /**
     * The server shared by the tests of this JVM; tests that stop or flush it start their own.
     *
     * @return the running shared server
     */
    public static RedisServer shared() {
        return SHARED.get();
    }

    static Path findBinary() {
        List<Path> candidates = new ArrayList<>();
        String configured = System.getProperty("kanuki.testkit.redis.bin");
        if (configured != null && !configured.isBlank()) {
            candidates.add(Path.of(configured, "redis-server"));
        }
        candidates.add(Path.of("/usr/bin/redis-server"));
        candidates.add(Path.of("/usr/local/bin/redis-server"));
        Path found = findExecutable(candidates);
        if (found == null) {
            found = onPath("redis-server");
        }
        if (found == null) {
            throw new MissingServerException("redis-server",
                    "looked in -Dkanuki.testkit.redis.bin, /usr/bin, /usr/local/bin and PATH", "redis-server");
        }
        return found;
    }

    /**
     * {@return {@code redis://127.0.0.1:PORT}, or for a TLS server
     *     {@code rediss://127.0.0.1:PORT?tlsCa=CERT} trusting its self-signed certificate}
     */
    public String kanukiUri() {
        return tls ? "rediss://" + HOST + ":" + port() + "?tlsCa=" + certificate()
                : "redis://" + HOST + ":" + port();
    }

    private Path certificate() {
        return directory.resolve("tls").resolve("cert.pem");
    }

    @Override
    void initialize() throws IOException, InterruptedException {
        Path data = subdirectory("data");
        if (monitors != null) {
            String name = monitors.substring(0, monitors.indexOf(' '));
            Path conf = data.resolve("sentinel.conf");
            java.nio.file.Files.writeString(conf, "sentinel monitor " + monitors + "\n"
                    + "sentinel down-after-milliseconds " + name + " 1000\n"
                    + "sentinel failover-timeout " + name + " 10000\n"
                    + "sentinel known-replica " + name + " " + HOST + " " + knownReplica + "\n");
            // the sentinel rewrites its configuration (as the service user when this JVM is root)
            java.nio.file.Files.setPosixFilePermissions(conf, java.nio.file.attribute.PosixFilePermissions.fromString("rw-rw-rw-"));
        }
        if (tls) {
            Path dir = subdirectory("tls");
            runToCompletion(List.of("openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes",
                    "-keyout", dir.resolve("key.pem").toString(), "-out", certificate().toString(), "-days", "2",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"), java.time.Duration.ofSeconds(60));
        }
    }

    @Override
    List<String> serverCommand(int port) {
        List<String> command = new ArrayList<>(List.of(binary.toString()));
        if (monitors != null) {
            // redis-server runs as a sentinel with --sentinel: the redis-sentinel package is not needed
            command.addAll(List.of(dataDirectory().resolve("sentinel.conf").toString(), "--sentinel"));
        }
        if (replicaOf != null) {
            command.addAll(List.of("--replicaof", HOST, replicaOf));
        }
        if (monitors == null) {
            // a replica is served at once, not after waiting 5 s for others to share the transfer
            command.addAll(List.of("--repl-diskless-sync-delay", "0"));
        }
        if (tls) {
            Path dir = directory.resolve("tls");
            command.addAll(List.of("--port", "0", "--tls-port", Integer.toString(port),
                    "--tls-cert-file", certificate().toString(), "--tls-key-file", dir.resolve("key.pem").toString(),
                    "--tls-ca-cert-file", certificate().toString(), "--tls-auth-clients", "no"));
        } else {
            command.addAll(List.of("--port", Integer.toString(port)));
        }
        command.addAll(List.of("--bind", HOST,
                "--dir", dataDirectory().toString(), "--save", "", "--appendonly", "no",
                "--logfile", logFile().toString(), "--daemonize", "no", "--protected-mode", "no",
                "--unixsocket", ""));
        return command;
    }

    @Override
    Path logFile() {
        return directory.resolve("redis.log");
    }

    @Override
    String readyMarker() {
        return monitors != null ? "+monitor master" : "Ready to accept connections";
    }

    @Override
    void requestFastShutdown(Process process) throws IOException {
        signal(process, "TERM");
    }

    /** {@return the empty string: the default user without a password} */
    @Override
    public String user() {
        return "default";
    }

    @Override
    String productName() {
        return "Redis";
    }

    @Override
    String kanukiScheme() {
        return "redis";
    }
}
