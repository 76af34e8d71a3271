package dev.kanuki.jdbc;

import dev.kanuki.testkit.PostgresServer;
import dev.kanuki.testkit.ServerProcess;

/** {@link SqlPruneContract} on PostgreSQL: advisory locks, shared ones too. */
class PostgresPruneTest extends SqlPruneContract {
    @Override
    ServerProcess server() {
        return PostgresServer.shared();
    }

    @Override
    boolean sharedLocks() {
        return true;
    }
}
