package dev.kanuki.mem;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kanuki.LockHandle;
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

    @Override
    protected void takeAway(String uri, String name, LockHandle holder) {
        assumeTrue(false, "mem: locks live in their holder's JVM and nothing else can take one away "
                + "(no lease, no server, no break): lost() cannot happen");
    }
}
