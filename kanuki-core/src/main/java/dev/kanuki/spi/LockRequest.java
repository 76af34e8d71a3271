package dev.kanuki.spi;

import dev.kanuki.OwnerInfo;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;

/**
 * One acquisition request as the engine passes it to a backend. The same request object is
 * passed to every attempt of one acquisition, so its owner id stays the same across retries.
 */
public final class LockRequest {
    private final String name;
    private final LockMode mode;
    private final int permits;
    private final Duration lease;
    private OwnerInfo owner;

    /**
     * @param name the validated lock name
     * @param mode exclusive, shared or one semaphore permit
     * @param permits the semaphore's size for {@link LockMode#PERMIT}, else 1
     * @param lease the lease ttl backends must give the lock; session backends ignore it
     */
    public LockRequest(String name, LockMode mode, int permits, Duration lease) {
        this.name = Objects.requireNonNull(name);
        this.mode = Objects.requireNonNull(mode);
        this.permits = permits;
        this.lease = Objects.requireNonNull(lease);
    }

    /** @return the lock name; already checked against {@link dev.kanuki.LockNames} */
    public String name() {
        return name;
    }

    /** @return the mode requested */
    public LockMode mode() {
        return mode;
    }

    /** @return the semaphore's number of permits ({@link LockMode#PERMIT}), else 1 */
    public int permits() {
        return permits;
    }

    /** @return the lease a ttl backend must give the lock */
    public Duration lease() {
        return lease;
    }

    /**
     * The owner record for this acquisition, made on first use (backends that keep no owner
     * record pay nothing): this host, this pid, a random 128-bit id, now, and now + lease.
     *
     * @return the owner record, the same on every call for this request
     */
    public synchronized OwnerInfo owner() {
        if (owner == null) {
            Instant now = Instant.now();
            owner = new OwnerInfo(ProcessIdentity.host(), ProcessIdentity.pid(), ProcessIdentity.randomId(),
                    now, now.plus(lease));
        }
        return owner;
    }

    @Override
    public String toString() {
        return mode + " '" + SafeNames.printable(name) + "'";
    }
}
