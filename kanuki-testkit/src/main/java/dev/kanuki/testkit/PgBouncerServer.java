package dev.kanuki.testkit;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A real PgBouncer for tests, in front of a test {@link PostgresServer}: the {@code pgbouncer}
 * binary with its own configuration in a temporary directory, listening on a free port of
 * 127.0.0.1, forwarding every database name to the PostgreSQL server as user
 * {@value PostgresServer#USER} ({@code auth_type = any}: no password), in the pool mode the test
 * asks for.
 *
 * <pre>{@code
 * PostgresServer pg = PostgresServer.shared();
 * try (PgBouncerServer bouncer = PgBouncerServer.start(pg, PgBouncerServer.PoolMode.TRANSACTION)) {
 *     String uri = bouncer.kanukiUri(bouncer.createDatabase("locks"));   // postgresql://127.0.0.1:PORT/locks?user=kanuki
 * }
 * }</pre>
 *
 * <p>The binary is {@code -Dkanuki.testkit.pgbouncer=PATH}, else {@code /usr/sbin/pgbouncer},
 * else {@code pgbouncer} on {@code PATH}; when none is found, {@link #start} throws a
 * {@link MissingServerException} naming the Debian package. PgBouncer refuses to run as root:
 * when the JVM runs as root it runs as user {@code postgres}, as the PostgreSQL server does.
 * The pools are large ({@value #POOL_SIZE} server connections per database and user), so that
 * session pooling never makes a test's connections queue for a server connection.
 */
public final class PgBouncerServer extends ServerProcess {
    /** Server connections per (database, user) pool: more than any test holds at once. */
    static final int POOL_SIZE = 150;

    /** PgBouncer's {@code pool_mode}: when a client's server connection goes back to the pool. */
    public enum PoolMode {
        /** At the client's disconnect: a client keeps one server session (session locks work). */
        SESSION,
        /** At the end of each transaction: consecutive transactions of a client may run on different server sessions. */
        TRANSACTION,
        /** After each statement; transactions of several statements are refused. */
        STATEMENT;

        /** {@return the value of {@code pool_mode} in {@code pgbouncer.ini}} */
        public String configValue() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Path binary;
    private final PostgresServer backend;
    private final PoolMode mode;

    private final List<String> settings;

    private PgBouncerServer(Path binary, PostgresServer backend, PoolMode mode, List<String> settings) {
        super("pgbouncer", "postgres");
        this.binary = binary;
        this.backend = backend;
        this.mode = mode;
        this.settings = settings;
    }

    /**
     * Starts a PgBouncer in front of {@code backend} that the caller owns: close it when done (a
     * shutdown hook kills it if the caller forgets). Closing it leaves the PostgreSQL server
     * running.
     *
     * @param backend the PostgreSQL server every database name is forwarded to
     * @param mode the pool mode
     * @return a running PgBouncer
     * @throws MissingServerException when {@code pgbouncer} is not installed
     */
    public static PgBouncerServer start(PostgresServer backend, PoolMode mode) {
        return start(backend, mode, new String[0]);
    }

    /**
     * Like {@link #start(PostgresServer, PoolMode)}, with more settings for the {@code [pgbouncer]}
     * section that the test kit does not set itself, e.g. {@code "server_round_robin = 1"}.
     *
     * @param backend the PostgreSQL server every database name is forwarded to
     * @param mode the pool mode
     * @param settings lines {@code name = value}
     * @return a running PgBouncer
     * @throws MissingServerException when {@code pgbouncer} is not installed
     */
    public static PgBouncerServer start(PostgresServer backend, PoolMode mode, String... settings) {
        for (String line : settings) {
            if (!line.matches("[a-z_]+ *=[^\\n]*")) {
                throw new IllegalArgumentException("not a PgBouncer setting line 'name = value': " + line);
            }
        }
        PgBouncerServer server = new PgBouncerServer(findBinary(), backend, mode, List.of(settings));
        server.firstStart();
        return server;
    }

    static Path findBinary() {
        List<Path> candidates = new ArrayList<>();
        String configured = System.getProperty("kanuki.testkit.pgbouncer");
        if (configured != null && !configured.isBlank()) {
            candidates.add(Path.of(configured));
        }
        candidates.add(Path.of("/usr/sbin/pgbouncer"));
        Path onPath = onPath("pgbouncer");
        if (onPath != null) {
            candidates.add(onPath);
        }
        Path found = findExecutable(candidates);
        if (found == null) {
            throw new MissingServerException("PgBouncer (pgbouncer)",
                    "looked in -Dkanuki.testkit.pgbouncer, /usr/sbin and PATH", "pgbouncer");
        }
        return found;
    }

    /** {@return the pool mode this PgBouncer runs in} */
    public PoolMode poolMode() {
        return mode;
    }

    /** {@return the PostgreSQL server behind this PgBouncer} */
    public PostgresServer backend() {
        return backend;
    }

    @Override
    void initialize() {
        // nothing to prepare: the configuration names the port, so serverCommand writes it at each start
    }

    @Override
    List<String> serverCommand(int port) {
        String ini = String.join("\n",
                "[databases]",
                // the fallback entry: any database name, forwarded under the same name
                "* = host=" + HOST + " port=" + backend.port() + " user=" + PostgresServer.USER,
                "[pgbouncer]",
                "listen_addr = " + HOST,
                "listen_port = " + port,
                "unix_socket_dir =",
                "auth_type = any",
                "pool_mode = " + mode.configValue(),
                "default_pool_size = " + POOL_SIZE,
                "max_client_conn = 1000",
                "max_db_connections = 0",
                // the JDBC driver sends it at start-up; PgBouncer refuses start-up parameters it does not know
                "ignore_startup_parameters = extra_float_digits",
                "server_login_retry = 1",
                "log_connections = 0",
                "log_disconnections = 0",
                String.join("\n", settings),
                "") + "\n";
        Path file = directory.resolve("pgbouncer.ini");
        try {
            Files.writeString(file, ini, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new IllegalStateException("cannot write " + file + ": " + e.getMessage(), e);
        }
        return List.of(binary.toString(), file.toString());
    }

    @Override
    Path logFile() {
        return directory.resolve("pgbouncer.out");
    }

    @Override
    String readyMarker() {
        return "process up";
    }

    @Override
    void requestFastShutdown(Process process) throws IOException {
        signal(process, "TERM"); // PgBouncer 1.18: SIGTERM is its immediate shutdown, SIGINT waits for clients
    }

    /** {@return {@value PostgresServer#USER}, the user PgBouncer logs in as} */
    @Override
    public String user() {
        return PostgresServer.USER;
    }

    @Override
    String jdbcScheme() {
        return "postgresql";
    }

    @Override
    String kanukiScheme() {
        return "postgresql";
    }

    /**
     * Creates the database on the PostgreSQL server behind (directly, not through PgBouncer).
     *
     * @param name lower-case letters, digits and underscores
     * @return the name
     */
    @Override
    public String createDatabase(String name) {
        return backend.createDatabase(name);
    }

    /**
     * Opens a JDBC connection through PgBouncer. Needs the PostgreSQL JDBC driver on the class path.
     *
     * @param database a database name
     * @return a new connection, a client of this PgBouncer
     * @throws SQLException when PgBouncer or the server refuses
     */
    @Override
    public Connection connect(String database) throws SQLException {
        return DriverManager.getConnection(jdbcUrl(database));
    }

    @Override
    public String toString() {
        return "test PgBouncer (pool_mode=" + mode.configValue() + ") on " + HOST + ":" + port() + " in front of port "
                + backend.port();
    }
}
