package dev.kanuki.jdbc;

import dev.kanuki.testkit.PostgresServer;
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
    String uri(Duration restartGrace) {
        return server.kanukiUri(database) + "&restartGrace=" + restartGrace.toMillis() + "ms";
    }

    @Override
    void killServer() {
        server.kill();
    }

    @Override
    void stopServer() {
        server.stop();
    }

    @Override
    void restartServer() {
        server.restart();
    }
}
