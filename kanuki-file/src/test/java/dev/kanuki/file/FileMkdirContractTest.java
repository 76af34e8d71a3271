package dev.kanuki.file;

import dev.kanuki.contract.ContractFor;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;

/** {@code file:DIR?strategy=mkdir} passes the contract. */
@ContractFor(value = "file", variants = "strategy=mkdir")
@Tag("slow")
class FileMkdirContractTest extends FileOsContractTest {
    @Override
    protected String uri(Path tempDir) {
        return "file:" + tempDir.resolve("locks") + "?strategy=mkdir";
    }
}
