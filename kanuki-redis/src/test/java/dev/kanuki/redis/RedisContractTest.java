package dev.kanuki.redis;

import dev.kanuki.contract.ContractFor;
import dev.kanuki.contract.LockProviderContract;
import dev.kanuki.testkit.RedisServer;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;

/** {@code redis://} passes the contract against a real redis-server. */
@ContractFor("redis")
@Tag("servers")
@Tag("slow")
class RedisContractTest extends LockProviderContract {

    @Override
    protected String uri(Path tempDir) {
        return RedisServer.shared().kanukiUri();
    }
}
