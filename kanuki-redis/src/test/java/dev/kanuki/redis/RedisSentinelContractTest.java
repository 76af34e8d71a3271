package dev.kanuki.redis;

import dev.kanuki.contract.ContractFor;
import dev.kanuki.contract.LockProviderContract;
import dev.kanuki.testkit.RedisSentinel;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;

/** {@code redis-sentinel://} passes the contract against a real primary, replica and two sentinels. */
@ContractFor("redis-sentinel")
@Tag("servers")
@Tag("slow")
class RedisSentinelContractTest extends LockProviderContract {
    private static RedisSentinel sentinel;

    @Override
    protected String uri(Path tempDir) {
        synchronized (RedisSentinelContractTest.class) {
            if (sentinel == null) {
                sentinel = RedisSentinel.start(2);
            }
        }
        return sentinel.kanukiUri();
    }
}
