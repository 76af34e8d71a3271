package dev.kanuki.testkit;

import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The one server of a kind that the tests of a JVM share, started at first use and again when it
 * stopped. A lock, not a monitor, guards it: starting a server waits for the server.
 *
 * @param <S> the kind of server
 */
final class SharedServer<S extends ServerProcess> {
    private final ReentrantLock lock = new ReentrantLock();
    private final Supplier<S> start;
    private S server;

    SharedServer(Supplier<S> start) {
        this.start = start;
    }

    /** {@return the running shared server, started when there is none or it stopped} */
    S get() {
        lock.lock();
        try {
            if (server == null || !server.isRunning()) {
                if (server != null) {
                    server.close();
                }
                server = start.get();
            }
            return server;
        } finally {
            lock.unlock();
        }
    }
}
