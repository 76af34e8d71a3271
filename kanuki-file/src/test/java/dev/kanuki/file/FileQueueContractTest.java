package dev.kanuki.file;

import dev.kanuki.contract.ContractFor;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;

/** {@code file:DIR?strategy=queue} passes the contract. */
@ContractFor(value = "file", variants = "strategy=queue")
@Tag("slow")
class FileQueueContractTest extends FileOsContractTest {
    @Override
    protected String uri(Path tempDir) {
        return "file:" + tempDir.resolve("locks") + "?strategy=queue";
    }
}
