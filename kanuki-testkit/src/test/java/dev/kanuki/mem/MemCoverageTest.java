package dev.kanuki.mem;

import dev.kanuki.contract.ContractCoverageCheck;
import dev.kanuki.spi.LockBackendFactory;
import java.nio.file.Path;

/** kanuki-core's backend ({@code mem:}) has its contract test here, beside the suite. */
class MemCoverageTest extends ContractCoverageCheck {
    @Override
    protected boolean checks(LockBackendFactory factory, Path testClasses) {
        return factory.schemes().contains("mem");
    }
}
