package dev.kanuki.servlet;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The filter on the default {@code file:} backend (kernel locks). */
class FileLockingFilterTest extends LockingFilterScenarios {
    @TempDir
    Path dir;

    @Override
    String uri() {
        return "file:" + dir;
    }
}
