package dev.kanuki.testkit;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A real PostgreSQL server for tests: {@code initdb} into a temporary directory, then
 * {@code postgres} on a free port of 127.0.0.1 with its own socket directory, trust
 * authentication for user {@value #USER}, and settings for speed rather than durability
 * ({@code fsync=off}, {@code full_page_writes=off}, small shared buffers). A crash of the
 * server process (see {@link #kill()}) still loses no committed transaction, because
 * {@code synchronous_commit} stays on and the operating system keeps what was written.
 *
 * <pre>{@code
 * PostgresServer pg = PostgresServer.shared();          // one per JVM, stopped at exit
 * String db = pg.createDatabase("locks_test");
 * LockProvider locks = LockProvider.open(pg.kanukiUri(db));
 * }</pre>
 *
 * <p>Binaries are looked up in {@code -Dkanuki.testkit.postgres.bin=DIR}, then
 * {@code /usr/lib/postgresql/<newest>/bin}, then {@code PATH}; when none is found,
 * {@link #start()} throws a {@link MissingServerException} naming the package to install.
 * When the JVM runs as root the server runs as user {@code postgres}.
 */
public final class PostgresServer extends ServerProcess {
    /** The superuser name {@code initdb} creates; it needs no password. */
    public static final String USER = "kanuki";
    private static final Pattern DATABASE_NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
    private static final SharedServer<PostgresServer> SHARED = new SharedServer<>(PostgresServer::start);

    private final Path initdb;
    private final Path postgres;

    private PostgresServer(Path bin) {
        super("postgres", "postgres");
        this.initdb = bin.resolve("initdb");
        this.postgres = bin.resolve("postgres");
    }

    /**
     * Starts a new server that the caller owns: close it when done (a shutdown hook kills it if
     * the caller forgets).
     *
     * @return a running server
     * @throws MissingServerException when the PostgreSQL binaries are not installed
     */
    public static PostgresServer start() {
        PostgresServer server = new PostgresServer(findBinaries());
        server.firstStart();
        return server;
    }

    /**
     * The server shared by every test of this JVM, started on first use and stopped when the JVM
     * exits. Tests that kill or restart a server should {@link #start()} their own.
     *
     * @return the running shared server
     * @throws MissingServerException when the PostgreSQL binaries are not installed
     */
    public static PostgresServer shared() {
        return SHARED.get();
    }

    /** {@return the directory holding {@code initdb} and {@code postgres}} */
    static Path findBinaries() {
        List<Path> candidates = new ArrayList<>();
        String configured = System.getProperty("kanuki.testkit.postgres.bin");
        if (configured != null && !configured.isBlank()) {
            candidates.add(Path.of(configured));
        }
        Path debian = Path.of("/usr/lib/postgresql");
        if (Files.isDirectory(debian)) {
            try (DirectoryStream<Path> versions = Files.newDirectoryStream(debian)) {
                List<Path> found = new ArrayList<>();
                versions.forEach(v -> found.add(v.resolve("bin")));
                found.sort(Comparator.comparing((Path p) -> versionOf(p.getParent().getFileName().toString())).reversed());
                candidates.addAll(found);
            } catch (IOException e) {
                // fall through to PATH
            }
        }
        Path onPath = onPath("initdb");
        if (onPath != null) {
            candidates.add(onPath.getParent());
        }
        for (Path bin : candidates) {
            if (Files.isExecutable(bin.resolve("initdb")) && Files.isExecutable(bin.resolve("postgres"))) {
                return bin;
            }
        }
        throw new MissingServerException("PostgreSQL server binaries (initdb, postgres)",
                "looked in -Dkanuki.testkit.postgres.bin, /usr/lib/postgresql/*/bin and PATH", "postgresql");
    }

    private static int versionOf(String text) {
        try {
            return Integer.parseInt(text.replaceAll("[^0-9].*", ""));
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    @Override
    void initialize() throws IOException, InterruptedException {
        subdirectory("socket");
        runToCompletion(List.of(initdb.toString(), "-D", dataDirectory().toString(), "-U", USER, "--auth=trust",
                "-E", "UTF8", "--no-locale", "--no-sync", "--no-instructions"), Duration.ofSeconds(120));
    }

    @Override
    List<String> serverCommand(int port) {
        return List.of(postgres.toString(), "-D", dataDirectory().toString(), "-p", Integer.toString(port),
                "-k", directory.resolve("socket").toString(),
                "-c", "listen_addresses=" + HOST,
                "-c", "fsync=off",
                "-c", "full_page_writes=off",
                "-c", "shared_buffers=16MB",
                "-c", "max_connections=300",
                "-c", "max_locks_per_transaction=128",
                "-c", "logging_collector=off",
                "-c", "log_destination=stderr",
                "-c", "log_min_error_statement=panic", // tests provoke lock timeouts on purpose
                "-c", "log_checkpoints=off");
    }

    @Override
    Path logFile() {
        return directory.resolve("postgres.out");
    }

    @Override
    String readyMarker() {
        return "ready to accept connections";
    }

    @Override
    void requestFastShutdown(Process process) throws IOException {
        signal(process, "INT"); // SIGTERM would be a "smart" shutdown that waits for every client
    }

    /** {@return {@value #USER}} */
    @Override
    public String user() {
        return USER;
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
     * Creates a database unless it exists. Needs the PostgreSQL JDBC driver on the class path.
     *
     * @param name lower-case letters, digits and underscores
     * @return the name
     */
    @Override
    public String createDatabase(String name) {
        if (!DATABASE_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("database name '" + name + "': use lower-case letters, digits and _");
        }
        try (Connection c = connect("postgres"); Statement s = c.createStatement()) {
            try {
                // PostgreSQL 15's default strategy writes the whole template to the WAL: slower here
                s.execute("CREATE DATABASE " + name + " STRATEGY = FILE_COPY");
            } catch (SQLException e) {
                if (!"42601".equals(e.getSQLState()) && !"42704".equals(e.getSQLState())) {
                    throw e;
                }
                s.execute("CREATE DATABASE " + name); // before PostgreSQL 15
            }
        } catch (SQLException e) {
            if (!"42P04".equals(e.getSQLState())) { // duplicate_database
                throw new IllegalStateException("cannot create database " + name + " on " + this + ": " + e.getMessage(), e);
            }
        }
        return name;
    }

    /**
     * Opens a JDBC connection as {@value #USER}. Needs the PostgreSQL JDBC driver on the class path.
     *
     * @param database a database name
     * @return a new connection
     * @throws SQLException when the server cannot be reached
     */
    @Override
    public Connection connect(String database) throws SQLException {
        try {
            return DriverManager.getConnection(jdbcUrl(database));
        } catch (SQLException e) {
            if ("08001".equals(e.getSQLState()) && String.valueOf(e.getMessage()).contains("No suitable driver")) {
                throw new IllegalStateException("no PostgreSQL JDBC driver on the class path: add org.postgresql:postgresql"
                        + " (test scope)", e);
            }
            throw e;
        }
    }
}
