package dev.kanuki.jdbc;

import dev.kanuki.LockBackendException;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockBackendFactory;
import dev.kanuki.spi.LockUri;
import java.io.IOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Driver;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.function.ToLongFunction;
import javax.sql.DataSource;

/**
 * Makes the database backends:
 * <ul>
 *   <li>{@code postgresql://host[:port]/database?user=U&password=P}: PostgreSQL advisory locks;</li>
 *   <li>{@code mysql://host[:port]/database?user=U} (also {@code mariadb://}): MySQL and MariaDB
 *       {@code GET_LOCK}.</li>
 * </ul>
 * The user (and password) may also be written {@code postgresql://U:P@host/db}. Options:
 * {@code user}, {@code password}, {@code passwordFile} (read the password from a file, so it
 * stays out of the URI that messages show), {@code table} (the owner-record table, default
 * {@code kanuki_locks}, created when missing), {@code maxIdle} (idle connections kept, default
 * 4), {@code connectTimeout} (default 10s), {@code restartGrace} (default 5s: how long after the
 * server started nothing is granted, so holders from before a restart notice their loss first; see
 * {@link SqlLockBackend}), {@code fenceMargin} (default 1h: how far the server clock must have
 * passed a name's last token before {@code prune} removes its row), any {@code jdbc.NAME=VALUE} (passed to the driver as property NAME, e.g.
 * {@code jdbc.sslmode=require}), and the engine's {@code lease} and {@code poll}.
 *
 * <p>The drivers are optional dependencies: add {@code org.postgresql:postgresql} or
 * {@code org.mariadb.jdbc:mariadb-java-client} (which also speaks to MySQL; MySQL's own
 * Connector/J is used when it is the one present).
 */
public final class JdbcLockBackendFactory implements LockBackendFactory {
    private static final Set<String> OPTIONS = Set.of("user", "password", "passwordFile", "table", "maxIdle",
            "connectTimeout", "restartGrace", "fenceMargin");
    private static final Set<String> DATASOURCE_OPTIONS = Set.of("table", "maxIdle", "restartGrace", "fenceMargin");
    private static final Duration DEFAULT_RESTART_GRACE = Duration.ofSeconds(5);
    private static final Duration DEFAULT_FENCE_MARGIN = Duration.ofHours(1);
    private static final String DEFAULT_TABLE = "kanuki_locks";
    private static final int DEFAULT_MAX_IDLE = 4;

    /** Used by {@link java.util.ServiceLoader}. */
    public JdbcLockBackendFactory() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("postgresql", "mysql", "mariadb");
    }

    @Override
    public LockBackend create(LockUri uri) {
        return create(uri, null);
    }

    /**
     * @param keyOverride for tests only: forces PostgreSQL advisory keys (to provoke collisions)
     */
    static SqlLockBackend create(LockUri uri, ToLongFunction<String> keyOverride) {
        Dialect dialect = Dialect.forScheme(uri.scheme());
        Set<String> known = new HashSet<>(OPTIONS);
        uri.params().keySet().stream().filter(k -> k.startsWith("jdbc.") && k.length() > 5).forEach(known::add);
        uri.rejectUnknownOptions(known);
        if (!uri.body().startsWith("//")) {
            throw new IllegalArgumentException("backend URI '" + uri + "' has no host; write " + uri.scheme()
                    + "://host:port/database?user=...");
        }
        Endpoint at = Endpoint.parse(uri, dialect);
        Properties props = new Properties();
        for (Map.Entry<String, String> e : uri.params().entrySet()) {
            if (e.getKey().startsWith("jdbc.")) {
                props.setProperty(e.getKey().substring(5), e.getValue());
            }
        }
        String user = uri.param("user").orElse(at.user);
        if (user != null) {
            props.setProperty("user", user);
        }
        String password = password(uri, at.password);
        if (password != null) {
            props.setProperty("password", password);
        }
        Duration connectTimeout = uri.durationParam("connectTimeout", Duration.ofSeconds(10));
        String jdbcUrl;
        if (dialect == Dialect.POSTGRESQL) {
            jdbcUrl = "jdbc:postgresql://" + at.hostPort() + "/" + at.database;
            props.putIfAbsent("connectTimeout", Long.toString(Math.max(1, connectTimeout.toSeconds())));
            // connectTimeout bounds the TCP connect only: a server that accepts and never answers
            // would hold the start-up handshake without it
            props.putIfAbsent("loginTimeout", Long.toString(Math.max(1, connectTimeout.toSeconds())));
            props.putIfAbsent("tcpKeepAlive", "true");
            props.putIfAbsent("ApplicationName", "kanuki");
        } else {
            jdbcUrl = (hasDriver("org.mariadb.jdbc.Driver") ? "jdbc:mariadb://" : "jdbc:mysql://") + at.hostPort()
                    + "/" + at.database;
            props.putIfAbsent("connectTimeout", Long.toString(Math.max(1, connectTimeout.toMillis())));
            props.putIfAbsent("tcpKeepAlive", "true");
        }
        Driver driver = driverFor(jdbcUrl, dialect);
        String description = dialect.scheme() + "://" + at.hostPort() + "/" + at.database;
        ConnectionSource source = new ConnectionSource() {
            @Override
            public Connection open() throws SQLException {
                Connection c = driver.connect(jdbcUrl, props);
                if (c == null) {
                    throw new SQLException("the driver " + driver.getClass().getName() + " refused " + jdbcUrl);
                }
                return c;
            }

            @Override
            public String describe() {
                return description;
            }

            @Override
            public boolean isDataSource() {
                return false;
            }
        };
        return build(dialect, source, uri, description, () -> { }, keyOverride);
    }

    /**
     * A backend over an application's DataSource (see {@link JdbcLocks}).
     *
     * @param uri carries only the options, e.g. {@code postgresql:datasource?table=app_locks}
     */
    static SqlLockBackend fromDataSource(DataSource dataSource, LockUri uri, Dialect dialect,
                                         ToLongFunction<String> keyOverride) {
        uri.rejectUnknownOptions(DATASOURCE_OPTIONS);
        String description = dialect.scheme() + " DataSource " + dataSource.getClass().getName();
        ConnectionSource source = new ConnectionSource() {
            @Override
            public Connection open() throws SQLException {
                return dataSource.getConnection();
            }

            @Override
            public String describe() {
                return description;
            }

            @Override
            public boolean isDataSource() {
                return true;
            }
        };
        return build(dialect, source, uri, null, () -> { }, keyOverride);
    }

    /**
     * @param scope the lock store's identity, or null to ask the first connection for its URL
     */
    private static SqlLockBackend build(Dialect dialect, ConnectionSource source, LockUri uri, String scope,
                                        Runnable onClose, ToLongFunction<String> keyOverride) {
        SqlDialect statements = dialect.statements(uri.param("table").orElse(DEFAULT_TABLE));
        int maxIdle = intParam(uri, "maxIdle", DEFAULT_MAX_IDLE);
        Duration grace = uri.durationParam("restartGrace", DEFAULT_RESTART_GRACE);
        SessionPool pool = new SessionPool(source, statements, maxIdle, grace.toNanos());
        String database;
        String storeScope = scope;
        // The tables first (sessions register themselves in one of them), then the same
        // connection becomes the first session.
        Connection first = pool.connect();
        try {
            // Before anything is written or locked: session locks need a connection pinned to one server session.
            SessionPinning.requirePinned(statements, source, first);
        } catch (RuntimeException e) {
            try {
                first.close();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            pool.close();
            throw e;
        }
        try {
            database = statements.prepareSchema(first);
            if (storeScope == null) {
                storeScope = dialect.scheme() + ":" + stripQuery(first.getMetaData().getURL()) + "#" + database;
            }
        } catch (SQLException e) {
            try {
                first.close();
            } catch (SQLException suppressed) {
                e.addSuppressed(suppressed);
            }
            pool.close();
            throw new LockBackendException("cannot prepare the lock tables " + statements.table + " and "
                    + statements.sessionsTable() + " on " + source.describe() + ": " + e.getMessage(),
                    "let the user create tables, or create them as docs/backends/sql.md shows", e);
        }
        pool.giveBack(pool.adopt(first)); // proves a session can be set up, and keeps it for the first lock
        return new SqlLockBackend(statements, pool, new LockKeys(database, keyOverride), storeScope, onClose,
                uri.durationParam("fenceMargin", DEFAULT_FENCE_MARGIN));
    }

    private static String stripQuery(String url) {
        if (url == null) {
            return "?";
        }
        int q = url.indexOf('?');
        return q < 0 ? url : url.substring(0, q);
    }

    private static int intParam(LockUri uri, String key, int fallback) {
        String value = uri.params().get(key);
        if (value == null) {
            return fallback;
        }
        try {
            int n = Integer.parseInt(value);
            if (n < 0) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("option " + key + "=" + value + " in backend URI '" + uri
                    + "' must be a whole number, 0 or more");
        }
    }

    private static String password(LockUri uri, String fromAuthority) {
        if (uri.param("passwordFile").isPresent()) {
            if (uri.param("password").isPresent() || fromAuthority != null) {
                throw new IllegalArgumentException("backend URI '" + uri + "' gives both password and passwordFile");
            }
            Path file = Path.of(uri.param("passwordFile").get());
            try {
                return Files.readString(file, StandardCharsets.UTF_8).strip();
            } catch (IOException e) {
                throw new LockBackendException("cannot read the password file " + file + ": " + e, "check the path and its permissions", e);
            }
        }
        return uri.param("password").orElse(fromAuthority);
    }

    private static boolean hasDriver(String className) {
        try {
            Class.forName(className, false, JdbcLockBackendFactory.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    private static Driver driverFor(String jdbcUrl, Dialect dialect) {
        try {
            return DriverManager.getDriver(jdbcUrl);
        } catch (SQLException e) {
            String artifact = dialect == Dialect.POSTGRESQL ? "org.postgresql:postgresql"
                    : "org.mariadb.jdbc:mariadb-java-client (or com.mysql:mysql-connector-j)";
            throw new LockBackendException("no JDBC driver for " + jdbcUrl.substring(0, jdbcUrl.indexOf("//"))
                    + " on the class path", "add " + artifact + " to the class path", e);
        }
    }

    /** Host, port, database and user info of a {@code scheme://[user[:password]@]host[:port]/database} URI. */
    private record Endpoint(String host, int port, String database, String user, String password) {
        static Endpoint parse(LockUri uri, Dialect dialect) {
            String authority = uri.authority();
            String user = null;
            String password = null;
            int at = authority.lastIndexOf('@');
            if (at >= 0) {
                String info = authority.substring(0, at);
                authority = authority.substring(at + 1);
                int colon = info.indexOf(':');
                user = decode(colon < 0 ? info : info.substring(0, colon));
                password = colon < 0 ? null : decode(info.substring(colon + 1));
            }
            String host = authority;
            int port = dialect == Dialect.POSTGRESQL ? 5432 : 3306;
            int portColon = authority.startsWith("[") ? authority.indexOf(':', authority.indexOf(']'))
                    : authority.lastIndexOf(':');
            if (portColon >= 0) {
                host = authority.substring(0, portColon);
                try {
                    port = Integer.parseInt(authority.substring(portColon + 1));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("backend URI '" + uri + "' has a bad port '"
                            + authority.substring(portColon + 1) + "'");
                }
            }
            if (host.isEmpty()) {
                throw new IllegalArgumentException("backend URI '" + uri + "' has no host; write " + uri.scheme()
                        + "://host:port/database");
            }
            String database = uri.path().startsWith("/") ? uri.path().substring(1) : uri.path();
            if (database.isEmpty() || database.contains("/")) {
                throw new IllegalArgumentException("backend URI '" + uri + "' must name one database: " + uri.scheme()
                        + "://" + authority + "/DATABASE");
            }
            return new Endpoint(host, port, database, user, password);
        }

        String hostPort() {
            return host + ":" + port;
        }

        private static String decode(String s) {
            return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
        }
    }
}
