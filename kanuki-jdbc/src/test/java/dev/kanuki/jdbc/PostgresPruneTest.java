package dev.kanuki.jdbc;

import dev.kanuki.testkit.PostgresServer;
import dev.kanuki.testkit.ServerProcess;
import org.junit.jupiter.api.BeforeAll;

/** {@link SqlPruneContract} on PostgreSQL: advisory locks, shared ones too. */
class PostgresPruneTest extends SqlPruneContract {
    /** Starts the server outside the tests' time limit: a first start can take minutes on a loaded machine. */
    @BeforeAll
    static void start() {
        PostgresServer.shared();
    }

    @Override
    ServerProcess server() {
        return PostgresServer.shared();
    }

    @Override
    boolean sharedLocks() {
        return true;
    }
}
