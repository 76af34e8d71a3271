package dev.kanuki.spi;

import dev.kanuki.LockProvider;
import dev.kanuki.engine.EngineLockProvider;

/**
 * Turns a backend into a {@link LockProvider}, for modules that build a backend from something
 * other than a URI (a {@code DataSource}, a client object an application already has). The
 * provider adds everything the engine does for every backend: the in-JVM per-name FIFO queue,
 * deadlines and backoff, lease renewal and lost-lock detection, fencing hand-out, release at close
 * and at JVM exit. Backends reached through a URI need none of this: {@link LockProvider#open}
 * finds their {@link LockBackendFactory} and does the same.
 */
public final class BackendProviders {
    private BackendProviders() {
    }

    /**
     * Wraps a backend in the engine.
     *
     * @param description a URI-like text naming the backend, shown in messages and
     *     {@link LockProvider#uri()}; its {@code lease}, {@code poll} and {@code waitThreads}
     *     options are read (see {@link LockProvider#open}), e.g. {@code postgresql:datasource?lease=10s}
     * @param backend the backend; the provider closes it when it closes (also when this throws)
     * @return the open provider
     * @throws IllegalArgumentException when the description or its engine options are invalid
     */
    public static LockProvider open(String description, LockBackend backend) {
        return EngineLockProvider.open(description, backend);
    }
}
