package dev.kanuki.jdbc;

import dev.kanuki.testkit.PostgresServer;
import dev.kanuki.testkit.ServerProcess;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/** A PostgreSQL server killed or restarted while a lock is held. */
class PostgresServerFailureTest extends ServerFailureScenarios {
    private static PostgresServer server;
    private static String database;

    @BeforeAll
    static void startServer() {
        server = PostgresServer.start();
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
             ResultSet rs = st.executeQuery("SELECT (EXTRACT(EPOCH FROM clock_timestamp() - pg_postmaster_start_time()) * 1000)::bigint")) {
            rs.next();
            return Duration.ofMillis(rs.getLong(1));
        }
    }
}
