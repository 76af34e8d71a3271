package dev.kanuki;

import dev.kanuki.engine.EngineLockProvider;

/**
 * The entry point: a connection to one lock backend, from which named locks are made.
 *
 * <pre>{@code
 * try (LockProvider locks = LockProvider.open("file:/var/lock/myapp");
 *      LockHandle h = locks.lock("board").acquire(Duration.ofSeconds(5))) {
 *     // critical section; h.fencingToken() increases with every holder
 * }
 * }</pre>
 *
 * <p>Backends are found by URI scheme through {@link java.util.ServiceLoader}: {@code mem:} is in
 * kanuki-core, {@code file:} in kanuki-file, and so on. A provider is thread-safe; open one per
 * backend and share it. Closing it releases every lock still held through it.
 *
 * <p>Providers still open when the JVM exits are closed by a shutdown hook, which exists only
 * while at least one provider is open (an application server can then unload the application
 * after its last provider closed). The system property {@code kanuki.shutdownHook=false} turns
 * the hook off; close providers yourself then.
 */
public interface LockProvider extends AutoCloseable {

    /**
     * Opens a backend by URI, e.g. {@code mem:}, {@code file:/var/lock/app},
     * {@code file:/var/lock/app?strategy=os}. Options every backend takes:
     * {@code lease} (ttl backends' lease, default 30s), {@code poll} (the longest pause between
     * attempts on backends that poll, default 5ms), {@code waitThreads} (how many waiters of this
     * provider may block in a backend's blocking wait at once, each holding a thread and, on a
     * database server, a connection; default 32; the others wait without a thread and keep their
     * place in line). Backends are found with {@link java.util.ServiceLoader}; a system property
     * {@code kanuki.backend.SCHEME} naming a {@code LockBackendFactory} class is used for that
     * scheme without scanning the class path (a short-lived process saves milliseconds).
     *
     * @param uri the backend URI
     * @return an open provider
     * @throws IllegalArgumentException when the URI is malformed or no backend handles its scheme
     * @throws LockBackendException when the backend cannot be reached or set up
     */
    static LockProvider open(String uri) {
        return EngineLockProvider.open(uri);
    }

    /**
     * Opens the default backend: {@code file:} in a per-user directory created with mode 0700
     * ({@code $XDG_RUNTIME_DIR/kanuki} when set, else {@code ~/.cache/kanuki/locks}).
     *
     * @return an open provider
     * @throws LockBackendException when kanuki-file is not on the class path or the directory
     *     cannot be created
     */
    static LockProvider openDefault() {
        return EngineLockProvider.open(DEFAULT_URI);
    }

    /** The URI {@link #openDefault()} opens. */
    String DEFAULT_URI = "file:";

    /** {@return the URI this provider was opened with} */
    String uri();

    /** {@return what this backend can do} */
    Capabilities capabilities();

    /**
     * Gets the exclusive lock of a name.
     *
     * @param name the lock's name (see {@link LockNames} for the rules)
     * @return the exclusive lock of that name
     * @throws IllegalArgumentException when the name breaks the rules
     */
    DistributedLock lock(String name);

    /**
     * Gets the read-write lock of a name.
     *
     * @param name the lock's name; its write lock is {@link #lock(String) lock(name)}
     * @return the read-write lock of that name
     * @throws UnsupportedOperationException when {@link Capabilities#sharedLocks()} is false
     * @throws IllegalArgumentException when the name breaks the rules
     */
    DistributedReadWriteLock readWriteLock(String name);

    /**
     * Gets the semaphore of a name, which lets up to {@code permits} holders in at once.
     *
     * @param name the semaphore's name
     * @param permits how many holders may hold it at once, at least 1
     * @return the semaphore
     * @throws UnsupportedOperationException when {@link Capabilities#semaphores()} is false
     * @throws IllegalArgumentException when the name breaks the rules or permits is below 1
     */
    DistributedSemaphore semaphore(String name, int permits);

    /**
     * Describes who holds a lock now, when the backend can tell, without taking it.
     *
     * @param name the lock's name
     * @return the current status of the lock
     */
    LockStatus status(String name);

    /**
     * Lists the locks the backend can enumerate: held and stale ones, with owners where recorded.
     *
     * @return the locks found
     * @throws UnsupportedOperationException when the backend cannot enumerate its locks
     */
    java.util.List<LockStatus> list();

    /**
     * Breaks a lock whose holder can no longer release it, using the backend's safe protocol (a
     * fresh lock taken meanwhile is never removed). Meant for operators ({@code kanuki break}).
     *
     * @param name the lock's name
     * @param force also break a live lock; its holder then finds it lost
     * @return the lock's status just before it was broken (FREE when there was nothing to break)
     * @throws IllegalStateException when the lock is live and {@code force} is false; the message names the owner
     * @throws UnsupportedOperationException when the backend's locks are only released by the
     *     backend itself (OS locks, database sessions): stop the holder instead
     */
    LockStatus breakLock(String name, boolean force);

    /**
     * Removes what free locks left behind (files of holders that crashed), without disturbing any
     * lock that is held or being taken. Meant for operators ({@code kanuki prune}).
     *
     * @param dryRun only report what would be removed
     * @return the removed artefacts (or those that would be), as the backend names them (paths)
     * @throws UnsupportedOperationException when the backend leaves nothing behind to prune
     */
    default java.util.List<String> prune(boolean dryRun) {
        throw new UnsupportedOperationException("this provider cannot prune");
    }

    /**
     * The spool this provider's store keeps for {@link ParkingLock}s, when it has one (Redis: a
     * list and hashes per name beside the lock's keys). Closed with the provider.
     *
     * @return the store's spool
     * @throws UnsupportedOperationException when the store keeps none: use
     *     {@link Spools#directory} on a directory every process sees
     */
    default dev.kanuki.spi.WorkSpool spool() {
        throw new UnsupportedOperationException("this provider's store keeps no spool; use Spools.directory(DIR)");
    }

    /**
     * A {@link ParkingLock} on the lock {@code name} over this provider's own {@link #spool()},
     * with the default options ({@link ParkingLock#builder} sets others or another spool).
     *
     * @param name the lock's name
     * @param handler applies items; every process taking part registers the same one
     * @return the parking lock
     * @throws UnsupportedOperationException when the store keeps no spool
     */
    default ParkingLock parkingLock(String name, ParkHandler handler) {
        return ParkingLock.builder(lock(name), spool(), handler).build();
    }

    /**
     * Registers a listener for the events of this provider's locks (see {@link LockListener}):
     * acquisitions started from now on report to it. With no listener registered, the engine's
     * cost is one volatile read per acquisition and per release.
     *
     * @param listener the listener; registering one twice makes it hear every event twice
     * @throws UnsupportedOperationException when this provider does not report events (a
     *     provider of one's own that does not override this)
     */
    default void addListener(LockListener listener) {
        throw new UnsupportedOperationException("this provider reports no lock events");
    }

    /**
     * Unregisters a listener: acquisitions started from now on no longer report to it (those
     * already started still do, so that it sees each one to its end).
     *
     * @param listener a listener registered with {@link #addListener}; others are ignored
     */
    default void removeListener(LockListener listener) {
        // a provider that reports no events has none registered
    }

    /**
     * Releases every lock still held through this provider and frees its resources. Idempotent.
     *
     * <p>In this order: the provider is marked closed, so acquisitions started from now on throw
     * {@link IllegalStateException} at once and no waiter is handed a handle; every acquisition
     * still waiting (synchronous or asynchronous, queued, pausing or blocked in the backend) ends
     * with an {@link IllegalStateException} saying the provider was closed; a grant the backend
     * answers for such a waiter meanwhile is released; every handle is released and its
     * {@link LockHandle#isHeld()} turns false; then the backend is closed. Once this returns,
     * nothing is held through this provider and other processes can take its locks at once, with
     * no lease to wait out.
     *
     * <p>Bounded: it waits at most 10 seconds for backend calls in flight (an attempt sent, a
     * release); a call that does not end by then is cut off by closing the backend (logged as a
     * warning), and a lock that call may still take frees when its lease or session ends.
     */
    @Override
    void close();
}
