package dev.kanuki.memcached;

import dev.kanuki.contract.ContractFor;
import dev.kanuki.contract.LockProviderContract;
import dev.kanuki.testkit.MemcachedServer;
import java.nio.file.Path;

/** {@code memcached://} passes the contract against a real memcached. */
@ContractFor("memcached")
class MemcachedContractTest extends LockProviderContract {

    @Override
    protected String uri(Path tempDir) {
        // a short lease: a SIGKILLed holder's lock is free after at most 6 s, not 31
        return MemcachedServer.shared().kanukiUri() + "?lease=5s";
    }
}
