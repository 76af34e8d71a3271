package dev.kanuki;

import dev.kanuki.park.DirectorySpool;
import dev.kanuki.spi.WorkSpool;
import java.nio.file.Path;

/**
 * Spools for {@link ParkingLock}s that work with any backend. A backend's own spool, in its
 * store, comes from {@link LockProvider#spool()}.
 */
public final class Spools {
    private Spools() {
    }

    /**
     * A spool in a directory: every process taking part must see the same directory (one host,
     * or a shared file system that renames atomically). Layout and guarantees: {@code docs/park.md}.
     *
     * @param directory the spool directory; created when missing
     * @return the spool (holds nothing open; closing it does nothing)
     * @throws LockBackendException when the directory cannot be created
     */
    public static WorkSpool directory(Path directory) {
        return new DirectorySpool(directory);
    }
}
