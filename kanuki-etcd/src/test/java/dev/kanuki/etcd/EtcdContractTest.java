package dev.kanuki.etcd;

import dev.kanuki.contract.ContractFor;
import dev.kanuki.contract.LockProviderContract;
import dev.kanuki.testkit.EtcdServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Tag;

/**
 * {@code etcd://} passes the contract against a real etcd. The provider's lease is 5 s (not the
 * default 30 s) so that the crashed-holder test waits seconds, not half a minute.
 */
@ContractFor("etcd")
@Tag("servers")
class EtcdContractTest extends LockProviderContract {

    @Override
    protected String uri(Path tempDir) {
        return EtcdServer.shared().kanukiUri() + "?lease=5s";
    }

    @Override
    protected Optional<String> shortLeaseUri(Duration lease) {
        return Optional.of(EtcdServer.shared().kanukiUri() + "?lease=" + lease.toMillis() + "ms");
    }
}
