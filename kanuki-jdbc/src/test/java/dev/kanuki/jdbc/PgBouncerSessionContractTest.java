package dev.kanuki.jdbc;

import dev.kanuki.contract.ContractFor;
import dev.kanuki.contract.LockProviderContract;
import dev.kanuki.testkit.PgBouncerServer;
import dev.kanuki.testkit.PgBouncerServer.PoolMode;
import dev.kanuki.testkit.PostgresServer;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;

/**
 * {@code postgresql://} through a real PgBouncer in {@code pool_mode=session} passes the
 * contract: each client keeps one server session, so session advisory locks work (transaction
 * and statement pooling are refused: {@link PgBouncerPoolingTest}). Skipped, naming the package,
 * where {@code pgbouncer} is not installed.
 */
@ContractFor("postgresql")
@Tag("servers")
@Tag("slow")
class PgBouncerSessionContractTest extends LockProviderContract {
    private static PgBouncerServer bouncer; // killed with the test JVM (the test kit's shutdown hook)
    private static String uri;

    @Override
    protected String uri(Path tempDir) {
        if (uri == null) {
            PostgresServer pg = PostgresServer.shared();
            bouncer = PgBouncerPoolingTest.startOrSkip(pg, PoolMode.SESSION);
            // restartGrace=0: the shared server started moments ago in this test run; no lock predates it
            uri = bouncer.kanukiUri(pg.createDatabase("contract_bouncer")) + "&restartGrace=0";
        }
        return uri;
    }
}
