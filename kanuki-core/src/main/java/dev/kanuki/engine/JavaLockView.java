package dev.kanuki.engine;

import dev.kanuki.LockException;
import dev.kanuki.LockHandle;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.Lock;

/**
 * {@link Lock} over a {@link EngineLock}. Each thread's handle is remembered so that
 * {@code unlock()} releases what that thread locked. Not reentrant, like the lock beneath.
 */
final class JavaLockView implements Lock {
    private static final Duration FOREVER = Duration.ofNanos(Long.MAX_VALUE);

    private final EngineLock lock;
    private final ConcurrentHashMap<Thread, LockHandle> held = new ConcurrentHashMap<>();

    JavaLockView(EngineLock lock) {
        this.lock = lock;
    }

    @Override
    public void lock() {
        boolean interrupted = Thread.interrupted();
        while (true) {
            try {
                remember(lock.acquire(FOREVER));
                break;
            } catch (LockException e) {
                if (!(e.getCause() instanceof InterruptedException)) {
                    throw e;
                }
                Thread.interrupted();
                interrupted = true; // lock() is not interruptible: keep waiting, restore the flag after
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    @Override
    public void lockInterruptibly() throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        try {
            remember(lock.acquire(FOREVER));
        } catch (LockException e) {
            if (e.getCause() instanceof InterruptedException ie) {
                Thread.interrupted();
                throw ie;
            }
            throw e;
        }
    }

    @Override
    public boolean tryLock() {
        return lock.tryAcquire().map(this::remember).isPresent();
    }

    @Override
    public boolean tryLock(long time, TimeUnit unit) throws InterruptedException {
        if (Thread.interrupted()) {
            throw new InterruptedException();
        }
        try {
            return lock.tryAcquire(Duration.ofNanos(unit.toNanos(time))).map(this::remember).isPresent();
        } catch (LockException e) {
            if (e.getCause() instanceof InterruptedException ie) {
                Thread.interrupted();
                throw ie;
            }
            throw e;
        }
    }

    private LockHandle remember(LockHandle handle) {
        LockHandle previous = held.putIfAbsent(Thread.currentThread(), handle);
        if (previous != null) {
            handle.close();
            throw new IllegalStateException("this thread already holds " + lock + " through this view");
        }
        return handle;
    }

    @Override
    public void unlock() {
        LockHandle handle = held.remove(Thread.currentThread());
        if (handle == null) {
            throw new IllegalMonitorStateException("the current thread does not hold " + lock);
        }
        handle.close();
    }

    @Override
    public Condition newCondition() {
        throw new UnsupportedOperationException("kanuki locks have no conditions");
    }
}
