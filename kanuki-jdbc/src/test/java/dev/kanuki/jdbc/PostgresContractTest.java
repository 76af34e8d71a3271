package dev.kanuki.jdbc;

import dev.kanuki.contract.ContractFor;
import dev.kanuki.contract.LockProviderContract;
import dev.kanuki.testkit.PostgresServer;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;

/** {@code postgresql://} passes the contract against a real PostgreSQL server. */
@ContractFor("postgresql")
@Tag("servers")
@Tag("slow")
class PostgresContractTest extends LockProviderContract {
    private static String uri;

    @Override
    protected String uri(Path tempDir) {
        if (uri == null) {
            PostgresServer pg = PostgresServer.shared();
            // restartGrace=0: the shared server was started by this very test run a moment ago, and no
            // lock predates it; the grace itself is tested in PostgresServerFailureTest.
            uri = pg.kanukiUri(pg.createDatabase("contract")) + "&restartGrace=0";
        }
        return uri;
    }
}
