package dev.kanuki.mem;

import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockBackendFactory;
import dev.kanuki.spi.LockUri;
import java.util.Set;

/** Makes {@code mem:} backends: {@code mem:} is the default namespace, {@code mem:NAME} another. */
public final class MemLockBackendFactory implements LockBackendFactory {

    /** Used by {@link java.util.ServiceLoader}. */
    public MemLockBackendFactory() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("mem");
    }

    @Override
    public LockBackend create(LockUri uri) {
        uri.rejectUnknownOptions(Set.of());
        return new MemLockBackend(uri.path());
    }
}
