package dev.kanuki.cli.board;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Lock;

/**
 * The board's lock, counting the acquisitions that may wait for it ({@code acquire},
 * {@code tryAcquire} with a timeout, {@code acquireAsync}, the {@link Lock} view): the board's
 * {@code lockWaits} figure. With {@code --when-busy park} it stays 0, since parking only ever
 * tries the lock once ({@link #tryAcquire()}); a change that made a post or a page wait for the
 * lock would show here, and the board's tests check it.
 */
final class CountingLock implements DistributedLock {
    private final DistributedLock lock;
    private final AtomicLong waits;

    CountingLock(DistributedLock lock) {
        this(lock, new AtomicLong());
    }

    private CountingLock(DistributedLock lock, AtomicLong waits) {
        this.lock = lock;
        this.waits = waits;
    }

    /** @return how many acquisitions could wait for the lock so far */
    long waits() {
        return waits.get();
    }

    @Override
    public String name() {
        return lock.name();
    }

    @Override
    public Optional<LockHandle> tryAcquire() {
        return lock.tryAcquire();
    }

    @Override
    public Optional<LockHandle> tryAcquire(Duration timeout) {
        if (!timeout.isZero()) {
            waits.incrementAndGet();
        }
        return lock.tryAcquire(timeout);
    }

    @Override
    public LockHandle acquire(Duration timeout) {
        waits.incrementAndGet();
        return lock.acquire(timeout);
    }

    @Override
    public CompletableFuture<LockHandle> acquireAsync(Duration timeout) {
        waits.incrementAndGet();
        return lock.acquireAsync(timeout);
    }

    @Override
    public DistributedLock withMaxHold(Duration maxHold, boolean interruptHolder) {
        return new CountingLock(lock.withMaxHold(maxHold, interruptHolder), waits);
    }

    @Override
    public Lock asJavaLock() {
        // The view may block in lock(); counted once, when asked for.
        waits.incrementAndGet();
        return lock.asJavaLock();
    }

    @Override
    public String toString() {
        return lock.toString();
    }
}
