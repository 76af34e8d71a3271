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
@ContractFor(value = "file", variants = "strategy=os")
class FileOsContractTest extends LockProviderContract {
    @Override
    protected String uri(Path tempDir) {
        return "file:" + tempDir.resolve("locks") + "?strategy=os";
    }

    /**
     * Kernel locks cannot be broken from outside, but their file can be deleted behind the
     * holder (an operator's {@code rm}): the holder's check that its path still names the file it
     * locked then fails, and the next acquirer locks a new file.
     */
    @Override
    protected void takeAway(String uri, String name, dev.kanuki.LockHandle holder) throws Exception {
        if (!uri.contains("strategy=os")) {
            super.takeAway(uri, name, holder); // the ttl strategies' tests extend this one
            return;
        }
        try (Stream<Path> list = Files.list(tempDir.resolve("locks"))) {
            for (Path p : list.toList()) {
                // The lock's own file (its name starts with the readable part of the lock's name),
                // not the directory's shared files.
                if (p.getFileName().toString().startsWith("contract_") && Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    Files.delete(p);
                }
            }
        }
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
