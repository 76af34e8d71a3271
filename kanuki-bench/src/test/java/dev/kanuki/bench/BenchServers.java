package dev.kanuki.bench;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kanuki.testkit.MissingServerException;
import java.util.function.Supplier;

/** Starts a test kit server for a smoke test, or skips the test with the kit's reason. */
final class BenchServers {
    private BenchServers() {
    }

    static <T> T startOrSkip(Supplier<T> start) {
        try {
            return start.get();
        } catch (MissingServerException e) {
            assumeTrue(false, e.getMessage());
            throw e; // not reached: the assumption aborts the test
        }
    }
}
