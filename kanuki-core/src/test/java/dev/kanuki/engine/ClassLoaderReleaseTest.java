package dev.kanuki.engine;

import static org.junit.jupiter.api.Assertions.assertNull;

import java.lang.ref.WeakReference;
import java.net.URL;
import java.net.URLClassLoader;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * An application server unloads a redeployed application only when nothing keeps its class
 * loader: after its last provider is closed, no kanuki thread, hook or timer may hold it. Here
 * kanuki is loaded by a class loader of its own (as a web application's would be), used in the
 * ways that start engine threads (an asynchronous wait that times out, a lease watchdog), closed,
 * and the loader must then be collectable.
 */
class ClassLoaderReleaseTest {
    @Test
    void noThreadOrHookKeepsTheClassLoaderAfterTheLastProviderCloses() throws Exception {
        WeakReference<ClassLoader> loader = useKanukiInItsOwnLoader();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (loader.get() != null && System.nanoTime() < deadline) {
            System.gc();
            Thread.sleep(200);
        }
        assertNull(loader.get(), "the application's class loader is still reachable: threads alive "
                + Thread.getAllStackTraces().keySet().stream().map(Thread::getName).filter(n -> n.startsWith("kanuki")).toList());
    }

    private static WeakReference<ClassLoader> useKanukiInItsOwnLoader() throws Exception {
        URL kanuki = dev.kanuki.LockProvider.class.getProtectionDomain().getCodeSource().getLocation();
        URL slf4j = org.slf4j.Logger.class.getProtectionDomain().getCodeSource().getLocation();
        URLClassLoader app = new URLClassLoader(new URL[] {kanuki, slf4j}, ClassLoader.getPlatformClassLoader());
        Thread current = Thread.currentThread();
        ClassLoader previous = current.getContextClassLoader();
        current.setContextClassLoader(app); // as a servlet container sets it while a request runs
        try {
            Class<?> providers = app.loadClass("dev.kanuki.LockProvider");
            Class<?> locks = app.loadClass("dev.kanuki.DistributedLock");
            Class<?> handles = app.loadClass("dev.kanuki.LockHandle");
            Object provider = providers.getMethod("open", String.class).invoke(null, "mem:unload");
            Object lock = providers.getMethod("lock", String.class).invoke(provider, "x");
            Object held = locks.getMethod("acquire", Duration.class).invoke(lock, Duration.ofSeconds(5));
            CompletableFuture<?> waiter = (CompletableFuture<?>) locks.getMethod("acquireAsync", Duration.class)
                    .invoke(lock, Duration.ofMillis(100));
            try {
                waiter.get(30, TimeUnit.SECONDS);
            } catch (ExecutionException expected) {
                // it timed out: the timer and a worker ran for it
            }
            handles.getMethod("close").invoke(held);
            providers.getMethod("close").invoke(provider);
        } finally {
            current.setContextClassLoader(previous);
        }
        app.close();
        return new WeakReference<>(app);
    }
}
