package dev.kanuki;

import java.util.Objects;

/**
 * What a backend can do. The contract suite skips, visibly and with a reason, what a backend
 * declares it cannot do; code can check these before asking for a read-write lock or a semaphore.
 * Built with {@link #builder(LeaseKind)}; every ability not named there is false.
 *
 * @param leaseKind how a held lock is kept alive and freed when its holder dies
 * @param crossProcess whether the lock excludes other processes (false only for {@code mem:})
 * @param sharedLocks whether {@link LockProvider#readWriteLock} is supported
 * @param semaphores whether {@link LockProvider#semaphore} is supported
 * @param persistentFencing whether fencing tokens keep increasing across restarts of all clients
 * @param ownerRecords whether the backend records who holds a lock
 * @param keepsStale whether the backend can keep stale locks for inspection (URI option
 *     {@code keepStale=true}: a lock whose holder is gone or whose lease ran out is then not
 *     broken automatically); a backend that cannot refuses the option
 */
public record Capabilities(
        LeaseKind leaseKind,
        boolean crossProcess,
        boolean sharedLocks,
        boolean semaphores,
        boolean persistentFencing,
        boolean ownerRecords,
        boolean keepsStale) {

    /**
     * Makes the description; {@link #builder(LeaseKind)} is the shorter way.
     *
     * @param leaseKind how a held lock is kept alive and freed when its holder dies
     * @param crossProcess whether the lock excludes other processes (false only for {@code mem:})
     * @param sharedLocks whether {@link LockProvider#readWriteLock} is supported
     * @param semaphores whether {@link LockProvider#semaphore} is supported
     * @param persistentFencing whether fencing tokens keep increasing across restarts of all clients
     * @param ownerRecords whether the backend records who holds a lock
     * @param keepsStale whether the backend can keep stale locks for inspection ({@code keepStale=true})
     * @throws NullPointerException when {@code leaseKind} is null
     */
    public Capabilities {
        Objects.requireNonNull(leaseKind, "leaseKind");
    }

    /**
     * Makes the description of a backend that cannot keep stale locks.
     *
     * @param leaseKind how a held lock is kept alive and freed when its holder dies
     * @param crossProcess whether the lock excludes other processes (false only for {@code mem:})
     * @param sharedLocks whether {@link LockProvider#readWriteLock} is supported
     * @param semaphores whether {@link LockProvider#semaphore} is supported
     * @param persistentFencing whether fencing tokens keep increasing across restarts of all clients
     * @param ownerRecords whether the backend records who holds a lock
     * @throws NullPointerException when {@code leaseKind} is null
     */
    public Capabilities(LeaseKind leaseKind, boolean crossProcess, boolean sharedLocks, boolean semaphores,
                        boolean persistentFencing, boolean ownerRecords) {
        this(leaseKind, crossProcess, sharedLocks, semaphores, persistentFencing, ownerRecords, false);
    }

    /**
     * Starts a description with every ability off.
     *
     * @param leaseKind how a held lock is kept alive and freed when its holder dies
     * @return a builder
     */
    public static Builder builder(LeaseKind leaseKind) {
        return new Builder(leaseKind);
    }

    /** Names the abilities a backend has, one call each; the rest stay false. */
    public static final class Builder {
        private final LeaseKind leaseKind;
        private boolean crossProcess;
        private boolean sharedLocks;
        private boolean semaphores;
        private boolean persistentFencing;
        private boolean ownerRecords;
        private boolean keepsStale;

        private Builder(LeaseKind leaseKind) {
            this.leaseKind = Objects.requireNonNull(leaseKind, "leaseKind");
        }

        /** {@return this builder; locks exclude other processes} */
        public Builder crossProcess() {
            crossProcess = true;
            return this;
        }

        /**
         * Says whether {@link LockProvider#readWriteLock} is supported.
         *
         * @param supported whether read-write locks are supported
         * @return this builder
         */
        public Builder sharedLocks(boolean supported) {
            sharedLocks = supported;
            return this;
        }

        /** {@return this builder; read-write locks are supported} */
        public Builder sharedLocks() {
            return sharedLocks(true);
        }

        /** {@return this builder; semaphores are supported} */
        public Builder semaphores() {
            semaphores = true;
            return this;
        }

        /** {@return this builder; fencing tokens keep increasing across restarts of all clients} */
        public Builder persistentFencing() {
            persistentFencing = true;
            return this;
        }

        /** {@return this builder; the backend records who holds a lock} */
        public Builder ownerRecords() {
            ownerRecords = true;
            return this;
        }

        /** {@return this builder; stale locks can be kept for inspection (URI option {@code keepStale=true})} */
        public Builder keepsStale() {
            keepsStale = true;
            return this;
        }

        /** {@return the capabilities named so far} */
        public Capabilities build() {
            return new Capabilities(leaseKind, crossProcess, sharedLocks, semaphores, persistentFencing, ownerRecords,
                    keepsStale);
        }
    }
}
