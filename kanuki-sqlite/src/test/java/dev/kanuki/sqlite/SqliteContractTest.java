package dev.kanuki.sqlite;

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
import org.junit.jupiter.api.Tag;

/** {@code sqlite:DIR} passes the contract. */
@ContractFor("sqlite")
@Tag("slow")
class SqliteContractTest extends LockProviderContract {
    @Override
    protected String uri(Path tempDir) {
        return "sqlite:" + tempDir.resolve("locks.db");
    }

    /**
     * A lock database deleted behind its holder (an operator's {@code rm}): the holder's check
     * that its path still names the database it locked fails, and the next acquirer starts a new
     * database.
     */
    @Override
    protected void takeAway(String uri, String name, dev.kanuki.LockHandle holder) throws Exception {
        try (Stream<Path> list = Files.list(tempDir.resolve("locks.db"))) {
            for (Path p : list.toList()) {
                if (p.getFileName().toString().startsWith("contract_")) {
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
        assertEquals(Set.of("locks.db"), top, "files appeared outside the lock directory");
        List<Path> entries;
        try (Stream<Path> walk = Files.walk(tempDir.resolve("locks.db"))) {
            entries = walk.skip(1).toList();
        }
        for (Path entry : entries) {
            assertEquals(tempDir.resolve("locks.db"), entry.getParent(), "a lock database left the directory: " + entry);
            assertTrue(Files.isRegularFile(entry, LinkOption.NOFOLLOW_LINKS), "not a regular file: " + entry);
            assertTrue(entry.getFileName().toString().matches("[A-Za-z0-9_-][A-Za-z0-9._-]*\\.db(-wal|-shm|-journal)?"),
                    "unsafe lock database name: " + entry.getFileName());
        }
    }
}
