package dev.kanuki.file;

import dev.kanuki.contract.ContractFor;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;

/** {@code file:DIR?strategy=rename} passes the contract. */
@ContractFor(value = "file", variants = "strategy=rename")
@Tag("slow")
class FileRenameContractTest extends FileOsContractTest {
    @Override
    protected String uri(Path tempDir) {
        return "file:" + tempDir.resolve("locks") + "?strategy=rename";
    }
}
