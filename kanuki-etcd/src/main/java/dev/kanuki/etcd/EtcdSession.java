package dev.kanuki.etcd;

import dev.kanuki.LockBackendException;
import io.etcd.jetcd.Lease;
import io.etcd.jetcd.lease.LeaseGrantResponse;
import io.etcd.jetcd.lease.LeaseKeepAliveResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One etcd lease that a provider's keys live on. It is kept alive on demand (by the engine's
 * renewals and by acquisitions), not by a background stream: a JVM that stops running stops
 * renewing, and etcd deletes its keys when the TTL runs out, which is exactly the guarantee a
 * lease must give. The TTL is the engine's lease in whole seconds (at least 2: etcd's own floor
 * is about 1.5 s with its default election timeout).
 */
final class EtcdSession {
    private final long id;
    private final long ttlSeconds;
    private final Lease leases;
    private final Awaiter awaiter;
    private volatile long validUntilNanos;
    private volatile boolean dead;
    /**
     * One renewal at a time. A lock, not the monitor: renewing waits for etcd, and a virtual
     * thread waiting inside {@code synchronized} pins its carrier thread on JDK 21 to 23.
     */
    private final ReentrantLock renewing = new ReentrantLock();

    private EtcdSession(long id, long ttlSeconds, long validUntilNanos, Lease leases, Awaiter awaiter) {
        this.id = id;
        this.ttlSeconds = ttlSeconds;
        this.validUntilNanos = validUntilNanos;
        this.leases = leases;
        this.awaiter = awaiter;
    }

    long id() {
        return id;
    }

    boolean isDead() {
        return dead;
    }

    void markDead() {
        dead = true;
    }

    /**
     * Renews the lease when less than two thirds of it remain (once per third, however many
     * locks ask).
     *
     * @return false when the lease is gone (expired, revoked): every key on it is lost
     */
    boolean keepAliveIfDue(Duration limit) {
        renewing.lock();
        try {
            return keepAliveIfDueLocked(limit);
        } finally {
            renewing.unlock();
        }
    }

    /** With {@link #renewing} held. */
    private boolean keepAliveIfDueLocked(Duration limit) {
        if (dead) {
            return false;
        }
        long remaining = validUntilNanos - System.nanoTime();
        if (remaining > TimeUnit.SECONDS.toNanos(ttlSeconds) * 2 / 3) {
            return true;
        }
        long sent = System.nanoTime();
        LeaseKeepAliveResponse r;
        try {
            r = awaiter.await(leases.keepAliveOnce(id), "renewing the lease", limit);
        } catch (LockBackendException e) {
            if (isLeaseGone(e) || System.nanoTime() - validUntilNanos > 0) {
                dead = true;
                return false;
            }
            throw e;
        }
        if (r.getTTL() <= 0) {
            dead = true;
            return false;
        }
        validUntilNanos = sent + TimeUnit.SECONDS.toNanos(r.getTTL());
        return true;
    }

    static boolean isLeaseGone(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = String.valueOf(t.getMessage());
            if (m.contains("lease not found") || m.contains("lease expired")) {
                return true;
            }
        }
        return false;
    }

    static long ttlSeconds(Duration lease) {
        return Math.max(2, (lease.toMillis() + 999) / 1000);
    }

    /** Waits for a request at most {@code limit}. */
    interface Awaiter {
        <T> T await(CompletableFuture<T> request, String what, Duration limit);
    }

    /** The provider's current session, replaced when it is lost. */
    static final class Holder {
        private final Lease leases;
        private final Awaiter awaiter;
        private EtcdSession current;
        private boolean closed;
        /** Guards {@link #current} and {@link #closed}; held while granting or revoking (a lock: see {@link #renewing}). */
        private final ReentrantLock lock = new ReentrantLock();

        Holder(Lease leases, Awaiter awaiter) {
            this.leases = leases;
            this.awaiter = awaiter;
        }

        /**
         * @param limit how long each call may take
         * @return a live session with at least a third of its TTL left, granting a new lease when needed
         */
        EtcdSession current(Duration lease, Duration limit) {
            lock.lock();
            try {
                return currentLocked(lease, limit);
            } finally {
                lock.unlock();
            }
        }

        /** With {@link #lock} held. */
        private EtcdSession currentLocked(Duration lease, Duration limit) {
            if (closed) {
                throw new IllegalStateException("the etcd backend is closed");
            }
            long ttl = ttlSeconds(lease);
            EtcdSession s = current;
            if (s != null && s.ttlSeconds == ttl && s.keepAliveIfDue(limit)) {
                return s;
            }
            long sent = System.nanoTime();
            LeaseGrantResponse granted = awaiter.await(leases.grant(ttl), "granting a lease", limit);
            s = new EtcdSession(granted.getID(), ttl, sent + TimeUnit.SECONDS.toNanos(granted.getTTL()), leases, awaiter);
            current = s;
            return s;
        }

        boolean isClosed() {
            lock.lock();
            try {
                return closed;
            } finally {
                lock.unlock();
            }
        }

        /** Revokes the current lease (its keys go at once) and refuses new sessions. */
        void close() {
            lock.lock();
            try {
                closeLocked();
            } finally {
                lock.unlock();
            }
        }

        /** With {@link #lock} held. */
        private void closeLocked() {
            closed = true;
            EtcdSession s = current;
            if (s != null && !s.dead) {
                s.dead = true;
                try {
                    // bounded: without a quorum, closing must not hang; the lease then runs out by itself
                    leases.revoke(s.id).get(EtcdLockBackend.CLOSE_WAIT.toMillis(), TimeUnit.MILLISECONDS);
                } catch (Exception e) {
                    // the lease runs out by itself
                }
            }
        }
    }
}
