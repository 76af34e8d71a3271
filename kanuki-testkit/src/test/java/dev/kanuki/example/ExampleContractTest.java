package dev.kanuki.example;

import dev.kanuki.contract.ContractFor;
import dev.kanuki.contract.LockProviderContract;
import java.nio.file.Path;
import java.util.UUID;

/** The backend guide's example passes the contract; a fresh namespace per test keeps tests apart. */
@ContractFor("example")
class ExampleContractTest extends LockProviderContract {
    @Override
    protected String uri(Path tempDir) {
        return "example:" + UUID.randomUUID();
    }
}
