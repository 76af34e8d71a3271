package dev.kanuki.file;

import dev.kanuki.contract.ContractCoverageCheck;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/** Every backend kanuki-file registers, and each of its strategies, has a contract test. */
class FileCoverageTest extends ContractCoverageCheck {
    /** Each strategy works differently: each needs its own contract test. */
    @Override
    protected Map<String, Set<String>> requiredVariants() {
        return Map.of("file", FileLockBackendFactory.strategies().stream()
                .map(s -> "strategy=" + s).collect(Collectors.toSet()));
    }
}
