package dev.kanuki.file;

import dev.kanuki.contract.ContractFor;
import java.nio.file.Path;

/** {@code file:DIR?strategy=symlink} passes the contract. */
@ContractFor(value = "file", variants = "strategy=symlink")
class FileSymlinkContractTest extends FileOsContractTest {
    @Override
    protected String uri(Path tempDir) {
        return "file:" + tempDir.resolve("locks") + "?strategy=symlink";
    }
}
