package dev.kanuki.jdbc;

import dev.kanuki.testkit.MariaDbServer;
import dev.kanuki.testkit.ServerProcess;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** A MariaDB server killed or restarted while a lock is held. */
class MariaDbServerFailureTest extends ServerFailureScenarios {
    private static MariaDbServer server;
    private static String database;

    @BeforeAll
    static void startServer() {
        server = MariaDbServer.start();
        database = server.createDatabase("failures");
    }

    @AfterAll
    static void closeServer() {
        server.close();
    }

    @Override
    ServerProcess server() {
        return server;
    }

    @Override
    String database() {
        return database;
    }

    @Override
    Duration serverUptime() throws SQLException {
        try (Connection c = server.connect(database);
             Statement st = c.createStatement();
             ResultSet rs = st.executeQuery("SHOW GLOBAL STATUS LIKE 'Uptime'")) {
            rs.next();
            return Duration.ofSeconds(rs.getLong(2));
        }
    }
}
