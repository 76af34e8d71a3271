package dev.kanuki.servlet;

import dev.kanuki.LockProvider;
import dev.kanuki.Spools;
import dev.kanuki.spi.WorkSpool;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The filter on the default {@code file:} backend (kernel locks). */
class FileLockingFilterTest extends LockingFilterScenarios {
    @TempDir
    Path dir;

    /** The spool directory, apart from the lock directory. */
    @TempDir
    Path spools;

    @Override
    String uri() {
        return "file:" + dir;
    }

    @Override
    WorkSpool spool(LockProvider provider) {
        return Spools.directory(spools);
    }
}
