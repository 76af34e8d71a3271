package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.contract.ContractFor;
import dev.kanuki.contract.LockProviderContract;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** {@code file:DIR?strategy=os} passes the contract. */
@ContractFor("file")
class FileOsContractTest extends LockProviderContract {
    @Override
    protected String uri(Path tempDir) {
        return "file:" + tempDir.resolve("locks") + "?strategy=os";
    }

    @Override
    protected void assertNothingOutside(Path tempDir) throws Exception {
        Set<String> top;
        try (Stream<Path> list = Files.list(tempDir)) {
            top = list.map(p -> p.getFileName().toString()).collect(Collectors.toSet());
        }
        assertEquals(Set.of("locks"), top, "files appeared outside the lock directory");
        List<Path> entries;
        try (Stream<Path> list = Files.list(tempDir.resolve("locks"))) {
            entries = list.toList();
        }
        for (Path entry : entries) {
            assertEquals(tempDir.resolve("locks"), entry.getParent(), "a lock file left the lock directory: " + entry);
            assertTrue(entry.getFileName().toString().matches("[A-Za-z0-9_-][A-Za-z0-9._-]*"),
                    "unsafe lock file name: " + entry.getFileName());
        }
    }
}
