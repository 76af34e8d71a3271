package dev.kanuki.testkit;

import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A real MariaDB server for tests: {@code mariadb-install-db} into a temporary directory, then
 * {@code mariadbd} on a free port of 127.0.0.1 with its socket in that directory, user
 * {@value #USER} without a password, no binary log, small buffers. InnoDB writes its log at
 * every commit and flushes it once a second ({@code innodb_flush_log_at_trx_commit=2}): a
 * crash of the server process (see {@link #kill()}) loses no committed transaction, a crash
 * of the machine could.
 *
 * <pre>{@code
 * MariaDbServer db = MariaDbServer.shared();            // one per JVM, stopped at exit
 * String name = db.createDatabase("locks_test");
 * LockProvider locks = LockProvider.open(db.kanukiUri(name));
 * }</pre>
 *
 * <p>Binaries are looked up in {@code -Dkanuki.testkit.mariadb.bin=DIR}, then {@code /usr/sbin},
 * {@code /usr/bin} and {@code PATH}; when none is found, {@link #start()} throws a
 * {@link MissingServerException} naming the package to install. When the JVM runs as root the
 * server runs as user {@code mysql}.
 */
public final class MariaDbServer extends ServerProcess {
    /** The user with all privileges and no password. */
    public static final String USER = "root";
    private static final Pattern DATABASE_NAME = Pattern.compile("[a-z_][a-z0-9_]{0,62}");
    private static final SharedServer<MariaDbServer> SHARED = new SharedServer<>(MariaDbServer::start);

    private final Path installDb;
    private final Path mariadbd;

    private MariaDbServer(Path installDb, Path mariadbd) {
        super("mariadb", "mysql");
        this.installDb = installDb;
        this.mariadbd = mariadbd;
    }

    /**
     * Starts a new server that the caller owns: close it when done (a shutdown hook kills it if
     * the caller forgets).
     *
     * @return a running server
     * @throws MissingServerException when the MariaDB server binaries are not installed
     */
    public static MariaDbServer start() {
        Path[] bins = findBinaries();
        MariaDbServer server = new MariaDbServer(bins[0], bins[1]);
        server.firstStart();
        return server;
    }

    /**
     * The server shared by every test of this JVM, started on first use and stopped when the JVM
     * exits. Tests that kill or restart a server should {@link #start()} their own.
     *
     * @return the running shared server
     * @throws MissingServerException when the MariaDB server binaries are not installed
     */
    public static MariaDbServer shared() {
        return SHARED.get();
    }

    /** {@return {@code [install-db, server]}} */
    static Path[] findBinaries() {
        List<Path> dirs = new ArrayList<>();
        String configured = System.getProperty("kanuki.testkit.mariadb.bin");
        if (configured != null && !configured.isBlank()) {
            dirs.add(Path.of(configured));
        }
        dirs.add(Path.of("/usr/sbin"));
        dirs.add(Path.of("/usr/bin"));
        dirs.add(Path.of("/usr/local/bin"));
        dirs.add(Path.of("/usr/local/sbin"));
        Path server = null;
        Path install = null;
        for (Path dir : dirs) {
            if (server == null) {
                server = findExecutable(List.of(dir.resolve("mariadbd"), dir.resolve("mysqld")));
            }
            if (install == null) {
                install = findExecutable(List.of(dir.resolve("mariadb-install-db"), dir.resolve("mysql_install_db")));
            }
        }
        if (server == null) {
            server = onPath("mariadbd");
        }
        if (install == null) {
            install = onPath("mariadb-install-db");
        }
        if (server == null || install == null) {
            throw new MissingServerException("MariaDB server binaries (mariadbd, mariadb-install-db)",
                    "looked in -Dkanuki.testkit.mariadb.bin, /usr/sbin, /usr/bin, /usr/local and PATH", "mariadb-server");
        }
        return new Path[] {install, server};
    }

    @Override
    void initialize() throws IOException, InterruptedException {
        runToCompletion(List.of(installDb.toString(), "--no-defaults", "--datadir=" + dataDirectory(),
                "--auth-root-authentication-method=normal", "--skip-test-db", "--skip-name-resolve"),
                Duration.ofSeconds(120));
    }

    @Override
    List<String> serverCommand(int port) {
        return List.of(mariadbd.toString(), "--no-defaults",
                "--datadir=" + dataDirectory(),
                "--socket=" + directory.resolve("mariadb.sock"),
                "--pid-file=" + directory.resolve("mariadbd.pid"),
                "--log-error=" + logFile(),
                "--port=" + port,
                "--bind-address=" + HOST,
                "--skip-networking=0",
                "--skip-name-resolve",
                "--skip-log-bin",
                "--performance-schema=0",
                "--max-connections=500",
                "--innodb-buffer-pool-size=32M",
                "--innodb-log-file-size=16M",
                "--innodb-flush-log-at-trx-commit=2",
                "--innodb-doublewrite=0",
                "--innodb-use-native-aio=0",
                "--character-set-server=utf8mb4",
                "--collation-server=utf8mb4_bin");
    }

    @Override
    Path logFile() {
        return directory.resolve("mariadb.log");
    }

    @Override
    String readyMarker() {
        return "ready for connections";
    }

    @Override
    void requestFastShutdown(Process process) throws IOException {
        signal(process, "TERM"); // mariadbd's normal shutdown: disconnects clients, flushes, exits
    }

    /** {@return {@value #USER}} */
    @Override
    public String user() {
        return USER;
    }

    @Override
    String jdbcScheme() {
        return "mariadb";
    }

    @Override
    String kanukiScheme() {
        return "mysql";
    }

    /**
     * Creates a database unless it exists. Needs the MariaDB JDBC driver on the class path.
     *
     * @param name lower-case letters, digits and underscores
     * @return the name
     */
    @Override
    public String createDatabase(String name) {
        if (!DATABASE_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("database name '" + name + "': use lower-case letters, digits and _");
        }
        try (Connection c = connect(""); Statement s = c.createStatement()) {
            s.execute("CREATE DATABASE IF NOT EXISTS " + name + " CHARACTER SET utf8mb4 COLLATE utf8mb4_bin");
        } catch (SQLException e) {
            throw new IllegalStateException("cannot create database " + name + " on " + this + ": " + e.getMessage(), e);
        }
        return name;
    }

    /**
     * Opens a JDBC connection as {@value #USER}. Needs the MariaDB JDBC driver on the class path.
     *
     * @param database a database name, or empty for none
     * @return a new connection
     * @throws SQLException when the server cannot be reached
     */
    @Override
    public Connection connect(String database) throws SQLException {
        try {
            return DriverManager.getConnection(jdbcUrl(database));
        } catch (SQLException e) {
            if (String.valueOf(e.getMessage()).contains("No suitable driver")) {
                throw new IllegalStateException("no MariaDB JDBC driver on the class path: add"
                        + " org.mariadb.jdbc:mariadb-java-client (test scope)", e);
            }
            throw e;
        }
    }
}
