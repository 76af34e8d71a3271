package dev.kanuki.memcached;

import dev.kanuki.contract.ContractFor;
import dev.kanuki.contract.LockProviderContract;
import dev.kanuki.testkit.MemcachedServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Tag;

/** {@code memcached://} passes the contract against a real memcached. */
@ContractFor("memcached")
@Tag("servers")
@Tag("slow")
class MemcachedContractTest extends LockProviderContract {

    /** A short lease: a SIGKILLed holder's lock is free after at most 6 s, not 31. */
    @Override
    protected String uri(Path tempDir) {
        return MemcachedServer.shared().kanukiUri() + "?lease=5s";
    }

    @Override
    protected Optional<String> shortLeaseUri(Duration lease) {
        return Optional.of(MemcachedServer.shared().kanukiUri() + "?lease=" + lease.toMillis() + "ms");
    }
}
