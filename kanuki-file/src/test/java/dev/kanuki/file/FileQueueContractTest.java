package dev.kanuki.file;

import dev.kanuki.contract.ContractFor;
import java.nio.file.Path;

/** {@code file:DIR?strategy=queue} passes the contract. */
@ContractFor(value = "file", variants = "strategy=queue")
class FileQueueContractTest extends FileOsContractTest {
    @Override
    protected String uri(Path tempDir) {
        return "file:" + tempDir.resolve("locks") + "?strategy=queue";
    }
}
