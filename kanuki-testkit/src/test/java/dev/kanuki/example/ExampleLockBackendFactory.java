package dev.kanuki.example;

import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockBackendFactory;
import dev.kanuki.spi.LockUri;
import java.util.Set;

/** Makes {@code example:NAMESPACE} backends; registered in this module's test resources. */
public final class ExampleLockBackendFactory implements LockBackendFactory {

    /** Used by {@link java.util.ServiceLoader}. */
    public ExampleLockBackendFactory() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("example");
    }

    @Override
    public LockBackend create(LockUri uri) {
        uri.rejectUnknownOptions(Set.of());
        return new ExampleLockBackend(uri.path());
    }
}
