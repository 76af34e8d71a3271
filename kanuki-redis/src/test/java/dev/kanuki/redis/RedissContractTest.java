package dev.kanuki.redis;

import dev.kanuki.contract.ContractFor;
import dev.kanuki.contract.LockProviderContract;
import dev.kanuki.testkit.RedisServer;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;

/** {@code rediss://} passes the contract against a real redis-server speaking only TLS. */
@ContractFor("rediss")
@Tag("servers")
@Tag("slow")
class RedissContractTest extends LockProviderContract {
    private static RedisServer server;

    @Override
    protected String uri(Path tempDir) {
        synchronized (RedissContractTest.class) {
            if (server == null) {
                server = RedisServer.startTls();
            }
        }
        return server.kanukiUri();
    }
}
