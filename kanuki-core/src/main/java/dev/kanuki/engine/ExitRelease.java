package dev.kanuki.engine;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes the providers still open when the JVM exits, so their locks are released rather than
 * left to expire. The JVM shutdown hook is registered when a provider opens and removed when the
 * last open provider closes: after that no hook references kanuki's classes or class loader, so
 * an application server can unload a redeployed application. With the system property
 * {@value #PROPERTY}{@code =false} no hook is registered; the application then closes its
 * providers itself.
 */
final class ExitRelease {
    /** The system property that switches the hook off when set to {@code false}. */
    static final String PROPERTY = "kanuki.shutdownHook";

    private static final Logger log = LoggerFactory.getLogger(ExitRelease.class);
    private static final Set<EngineLockProvider> OPEN = new HashSet<>(); // guarded by ExitRelease.class
    private static Thread hook; // guarded by ExitRelease.class

    private ExitRelease() {
    }

    static synchronized void opened(EngineLockProvider provider) {
        OPEN.add(provider);
        if (hook == null && !"false".equalsIgnoreCase(System.getProperty(PROPERTY, "true").trim())) {
            Thread thread = new Thread(ExitRelease::closeAll, "kanuki-shutdown");
            try {
                Runtime.getRuntime().addShutdownHook(thread);
                hook = thread;
            } catch (IllegalStateException e) {
                log.debug("JVM already shutting down; no shutdown hook for {}", provider);
            }
        }
    }

    static synchronized void closed(EngineLockProvider provider) {
        OPEN.remove(provider);
        if (OPEN.isEmpty() && hook != null) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // the JVM is shutting down: the hook is running (perhaps this very close)
            }
            hook = null;
        }
    }

    /** {@return the registered shutdown hook, or null when none is registered} */
    static synchronized Thread hook() {
        return hook;
    }

    private static void closeAll() {
        List<EngineLockProvider> open;
        synchronized (ExitRelease.class) {
            open = new ArrayList<>(OPEN);
        }
        for (EngineLockProvider provider : open) {
            try {
                provider.close();
            } catch (RuntimeException e) {
                log.warn("releasing locks of {} at exit failed", provider.uri(), e);
            }
        }
    }
}
