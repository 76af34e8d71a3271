package dev.kanuki.spi;

import java.util.Set;

/**
 * Makes backends for URI schemes. Implementations are found with {@link java.util.ServiceLoader}:
 * list the class in {@code META-INF/services/dev.kanuki.spi.LockBackendFactory}.
 */
public interface LockBackendFactory {

    /** {@return the URI schemes this factory handles, lower case, e.g. {@code file}} */
    Set<String> schemes();

    /**
     * Makes a backend for a URI of this factory's scheme.
     *
     * @param uri the parsed URI
     * @return a new backend
     * @throws IllegalArgumentException when the URI's options are invalid
     * @throws dev.kanuki.LockBackendException when the backend cannot be set up
     */
    LockBackend create(LockUri uri);
}
