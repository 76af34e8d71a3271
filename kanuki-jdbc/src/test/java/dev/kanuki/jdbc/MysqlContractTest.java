package dev.kanuki.jdbc;

import dev.kanuki.contract.ContractFor;
import dev.kanuki.contract.LockProviderContract;
import dev.kanuki.testkit.MariaDbServer;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;

/** {@code mysql://} passes the contract against a real MariaDB server. */
@ContractFor({"mysql", "mariadb"})
@Tag("servers")
@Tag("slow")
class MysqlContractTest extends LockProviderContract {
    private static String uri;

    @Override
    protected String uri(Path tempDir) {
        if (uri == null) {
            MariaDbServer db = MariaDbServer.shared();
            // restartGrace=0: the shared server was started by this very test run a moment ago, and no
            // lock predates it; the grace itself is tested in MariaDbServerFailureTest.
            uri = db.kanukiUri(db.createDatabase("contract")) + "&restartGrace=0";
        }
        return uri;
    }
}
