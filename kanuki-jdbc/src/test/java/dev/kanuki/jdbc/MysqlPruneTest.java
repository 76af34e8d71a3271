package dev.kanuki.jdbc;

import dev.kanuki.testkit.MariaDbServer;
import dev.kanuki.testkit.ServerProcess;
import org.junit.jupiter.api.BeforeAll;

/** {@link SqlPruneContract} on MariaDB ({@code mysql://}): {@code GET_LOCK}, no shared locks. */
class MysqlPruneTest extends SqlPruneContract {
    /** Starts the server outside the tests' time limit: a first start can take minutes on a loaded machine. */
    @BeforeAll
    static void start() {
        MariaDbServer.shared();
    }

    @Override
    ServerProcess server() {
        return MariaDbServer.shared();
    }

    @Override
    boolean sharedLocks() {
        return false;
    }
}
