package dev.kanuki.jdbc;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockUri;
import dev.kanuki.testkit.MariaDbServer;
import dev.kanuki.testkit.PostgresServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A wrong or missing password and a database that does not exist are named in the error's one
 * line, with what to do, on PostgreSQL and MariaDB: not only the driver's words after "cannot
 * connect", with a hint listing everything that could be wrong.
 */
@Tag("servers")
class SqlConnectErrorsTest {
    private static final String USER = "kanuki_pw";
    private static final String PASSWORD = "s3cret";
    private static PostgresServer postgres;

    @BeforeAll
    static void start() throws Exception {
        // A server of our own: its pg_hba.conf is changed so that one user needs a password.
        postgres = PostgresServer.start();
        postgres.createDatabase("locks");
        try (Connection c = postgres.connect("postgres"); Statement s = c.createStatement()) {
            s.execute("CREATE ROLE " + USER + " LOGIN PASSWORD '" + PASSWORD + "'");
            s.execute("GRANT ALL ON DATABASE locks TO " + USER);
            Path hba;
            try (ResultSet r = s.executeQuery("SHOW hba_file")) {
                r.next();
                hba = Path.of(r.getString(1));
            }
            String rules = "host all " + USER + " 127.0.0.1/32 scram-sha-256\n"
                    + Files.readString(hba, StandardCharsets.UTF_8);
            Files.writeString(hba, rules, StandardCharsets.UTF_8);
            s.execute("SELECT pg_reload_conf()");
        }
        try (Connection c = postgres.connect("locks"); Statement s = c.createStatement()) {
            s.execute("GRANT ALL ON SCHEMA public TO " + USER);
        }
        MariaDbServer maria = MariaDbServer.shared();
        maria.createDatabase("locks");
        try (Connection c = maria.connect("locks"); Statement s = c.createStatement()) {
            for (String host : new String[] {"localhost", "127.0.0.1", "%"}) {
                s.execute("CREATE USER IF NOT EXISTS '" + USER + "'@'" + host + "' IDENTIFIED BY '" + PASSWORD + "'");
                s.execute("GRANT ALL ON locks.* TO '" + USER + "'@'" + host + "'");
            }
        }
    }

    @AfterAll
    static void stop() {
        if (postgres != null) {
            postgres.close();
        }
    }

    private static String postgres(String userInfo, String database) {
        return "postgresql://" + userInfo + "127.0.0.1:" + postgres.port() + "/" + database;
    }

    private static String maria(String userInfo, String database) {
        return "mysql://" + userInfo + "127.0.0.1:" + MariaDbServer.shared().port() + "/" + database;
    }

    private static LockBackendException failure(String uri) {
        return assertThrows(LockBackendException.class, () -> {
            LockBackend backend = JdbcLockBackendFactory.create(LockUri.parse(uri), null);
            backend.close();
        });
    }

    private static void assertNames(LockBackendException e, String inMessage, String inHint) {
        String line = e.getMessage() + " / " + e.hint();
        assertTrue(e.getMessage().contains(inMessage), line);
        assertTrue(e.hint().contains(inHint), line);
        assertFalse(e.hint().contains("server is running"), line);
        assertFalse(e.getMessage().contains("\n"), line);
        assertFalse(line.contains(PASSWORD), "the password is not shown: " + line);
    }

    @Test
    void theUserWorksWithItsPassword() throws SQLException {
        // the other cases differ from this one in one thing each
        JdbcLockBackendFactory.create(LockUri.parse(postgres(USER + ":" + PASSWORD + "@", "locks")), null).close();
        JdbcLockBackendFactory.create(LockUri.parse(maria(USER + ":" + PASSWORD + "@", "locks")), null).close();
    }

    @Test
    void aWrongPasswordIsCalledSo() {
        assertNames(failure(postgres(USER + ":wrong@", "locks")), "refused the login", "password");
        assertNames(failure(maria(USER + ":wrong@", "locks")), "refused the login", "password");
    }

    @Test
    void aMissingPasswordIsCalledSo() {
        assertNames(failure(postgres(USER + "@", "locks")), "requires a password", "password");
        assertNames(failure(maria(USER + "@", "locks")), "refused the login", "password");
    }

    @Test
    void anUnknownDatabaseIsCalledSo() {
        assertNames(failure(postgres(USER + ":" + PASSWORD + "@", "nosuch")), "no database nosuch", "CREATE DATABASE");
        assertNames(failure(maria("root@", "nosuch")), "no database nosuch", "CREATE DATABASE");
        // MariaDB does not tell a user without privileges on it whether a database exists
        assertNames(failure(maria(USER + ":" + PASSWORD + "@", "nosuch")), "no access to database nosuch",
                "CREATE DATABASE nosuch");
    }
}
