package dev.kanuki.zookeeper;

import dev.kanuki.contract.ContractFor;
import dev.kanuki.contract.LockProviderContract;
import dev.kanuki.testkit.ZooKeeperServer;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;

/**
 * {@code zookeeper://} passes the contract against a real ZooKeeper. The session timeout is 1.2 s
 * (not the default 10 s): a killed holder's node goes when its session expires, and the contract
 * expects a session lock to free within 2 s.
 */
@ContractFor("zookeeper")
@Tag("servers")
class ZooKeeperContractTest extends LockProviderContract {

    @Override
    protected String uri(Path tempDir) {
        return ZooKeeperServer.shared().kanukiUri() + "?session=1200ms";
    }
}
