package dev.kanuki.engine;

import dev.kanuki.spi.LockBackendFactory;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.TreeMap;

/**
 * Finds backend factories by URI scheme through {@link ServiceLoader}.
 *
 * <p>A system property {@code kanuki.backend.SCHEME} naming a factory class (with a public
 * no-argument constructor) is used for that scheme without the service scan, which reads every
 * jar on the class path: a few milliseconds that a short-lived process such as the
 * {@code kanuki} command notices. The command sets it for its built-in backends.
 */
public final class BackendRegistry {
    /** The prefix of the system properties that name a scheme's factory class. */
    public static final String FACTORY_PROPERTY_PREFIX = "kanuki.backend.";

    private static volatile Map<String, LockBackendFactory> factories;

    private BackendRegistry() {
    }

    /** {@return every registered factory by scheme, sorted by scheme} */
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
        LockBackendFactory named = named(scheme);
        if (named != null) {
            return named;
        }
        LockBackendFactory factory = factories().get(scheme);
        if (factory == null) {
            throw new IllegalArgumentException("no kanuki backend handles '" + scheme + ":' URIs (known: "
                    + String.join(", ", factories().keySet())
                    + "); add the kanuki module that provides it to the class path (kanuki-file: file:, kanuki-sqlite:"
                    + " sqlite:, kanuki-jdbc: postgresql:, mysql:, mariadb:), or check the spelling");
        }
        return factory;
    }

    /** {@return the factory named by {@code kanuki.backend.SCHEME}, or null when none is (or it cannot be made)} */
    private static LockBackendFactory named(String scheme) {
        String className = System.getProperty(FACTORY_PROPERTY_PREFIX + scheme);
        if (className == null || className.isBlank()) {
            return null;
        }
        try {
            Class<?> type = Class.forName(className.strip(), true, BackendRegistry.class.getClassLoader());
            LockBackendFactory factory = (LockBackendFactory) type.getConstructor().newInstance();
            return factory.schemes().contains(scheme) ? factory : null;
        } catch (ReflectiveOperationException | ClassCastException | LinkageError e) {
            return null; // the service scan finds it, or names the known schemes
        }
    }
}
