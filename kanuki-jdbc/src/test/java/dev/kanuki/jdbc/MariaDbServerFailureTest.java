package dev.kanuki.jdbc;

import dev.kanuki.testkit.MariaDbServer;
import dev.kanuki.testkit.ServerProcess;
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
}
