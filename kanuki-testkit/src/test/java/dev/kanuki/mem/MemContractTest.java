package dev.kanuki.mem;

import dev.kanuki.contract.ContractFor;
import dev.kanuki.contract.LockProviderContract;
import java.nio.file.Path;
import java.util.UUID;

/** {@code mem:} passes the contract; a fresh namespace per test keeps tests apart. */
@ContractFor("mem")
class MemContractTest extends LockProviderContract {
    @Override
    protected String uri(Path tempDir) {
        return "mem:" + UUID.randomUUID();
    }
}
