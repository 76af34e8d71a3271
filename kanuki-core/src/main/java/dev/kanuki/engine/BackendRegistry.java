package dev.kanuki.engine;

import dev.kanuki.spi.LockBackendFactory;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;

/** Finds backend factories by URI scheme through {@link ServiceLoader}. */
public final class BackendRegistry {
    private static volatile Map<String, LockBackendFactory> factories;

    private BackendRegistry() {
    }

    /** @return every registered factory by scheme, sorted by scheme */
    public static Map<String, LockBackendFactory> factories() {
        Map<String, LockBackendFactory> found = factories;
        if (found == null) {
            found = new TreeMap<>();
            for (LockBackendFactory factory : ServiceLoader.load(LockBackendFactory.class,
                    BackendRegistry.class.getClassLoader())) {
                for (String scheme : factory.schemes()) {
                    found.putIfAbsent(scheme, factory);
                }
            }
            factories = found;
        }
        return found;
    }

    /**
     * @param scheme a URI scheme
     * @return its factory
     * @throws IllegalArgumentException naming the known schemes when none handles it
     */
    public static LockBackendFactory forScheme(String scheme) {
        LockBackendFactory factory = factories().get(scheme);
        if (factory == null) {
            throw new IllegalArgumentException("no kanuki backend handles '" + scheme + ":' URIs (known: "
                    + String.join(", ", factories().keySet())
                    + "); add the kanuki module that provides it to the class path (kanuki-file: file:, kanuki-sqlite:"
                    + " sqlite:, kanuki-jdbc: postgresql:, mysql:, mariadb:), or check the spelling");
        }
        return factory;
    }
}
