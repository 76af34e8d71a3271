package dev.kanuki.jdbc;

import dev.kanuki.testkit.PostgresServer;
import dev.kanuki.testkit.ServerProcess;
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
}
