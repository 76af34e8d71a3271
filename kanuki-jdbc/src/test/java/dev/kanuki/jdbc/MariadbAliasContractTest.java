package dev.kanuki.jdbc;

import dev.kanuki.contract.ContractFor;
import dev.kanuki.contract.LockProviderContract;
import dev.kanuki.testkit.MariaDbServer;
import java.nio.file.Path;

/**
 * {@code mariadb://}, the alias of {@code mysql://}, passes the contract too. (The coverage
 * meta-test asks for one contract test per registered scheme; the alias runs the same code.)
 */
@ContractFor("mariadb")
class MariadbAliasContractTest extends LockProviderContract {
    private static String uri;

    @Override
    protected String uri(Path tempDir) {
        if (uri == null) {
            MariaDbServer db = MariaDbServer.shared();
            uri = db.kanukiUri(db.createDatabase("contract_alias")).replaceFirst("^mysql:", "mariadb:") + "&restartGrace=0";
        }
        return uri;
    }
}
