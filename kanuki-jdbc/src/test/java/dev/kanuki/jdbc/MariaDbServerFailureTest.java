package dev.kanuki.jdbc;

import dev.kanuki.testkit.MariaDbServer;
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
