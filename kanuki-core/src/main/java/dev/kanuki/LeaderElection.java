package dev.kanuki;

import dev.kanuki.spi.SafeNames;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader election on any backend: the candidate that holds the election's lock is the leader.
 *
 * <pre>{@code
 * LeaderElection election = LeaderElection.join(provider, "billing-jobs", new LeaderCandidate() {
 *     public void elected(Leadership term) { scheduler.start(term.epoch()); }
 *     public void revoked(Leadership term, Leadership.End why) { scheduler.stop(); }
 * });
 * ...
 * election.close(); // leaves the election; the next candidate takes over at once
 * }</pre>
 *
 * <p>Built on {@link DistributedLock} alone, so it works wherever locks do: a candidate
 * <em>stands</em> by waiting for the exclusive lock of the election's name, without limit, on a
 * thread of its own ({@code kanuki-leader}, a daemon). When it gets the lock it is elected, with
 * the lock's fencing token as its {@linkplain Leadership#epoch() epoch}, which is strictly
 * greater than every earlier leader's. When the lock is lost (a lease not renewed, a session that
 * ended, the backend gone for longer than the lease) or the provider is closed, the candidate is
 * told ({@link LeaderCandidate#revoked}) and, after a loss, stands again. A standby takes over as
 * soon as the lock is free: at once when the leader resigns or its process ends (session
 * backends, and ttl backends that see the holder's process is gone), or within the backend's
 * lease when the leader's machine vanishes (see the backend's page for its bound).
 *
 * <p>As with any lease, a leader that pauses for longer than the lease on a ttl backend (a
 * stopped process, a long GC, a suspended VM) may go on for a moment after another was elected,
 * until its watchdog finds the lock lost. Carry the epoch into what the leader writes, so that a
 * store can refuse a deposed leader's writes ({@link FencedResource}).
 *
 * <p>Close the election before the provider it runs on: closing the provider releases the lock
 * first, and the candidate learns of it (reason {@link Leadership.End#PROVIDER_CLOSED}) only
 * after another may have been elected.
 */
public final class LeaderElection implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(LeaderElection.class);
    /** Standing waits without limit (the engine saturates such a timeout). */
    private static final Duration FOREVER = Duration.ofDays(365L * 1000);
    /**
     * How often a leader's thread looks at its handle: a provider closed under it ends the handle
     * without completing {@code lost()}. Losses and resignations wake it at once.
     */
    private static final long CHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long FIRST_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);
    private static final long LAST_RETRY_NANOS = TimeUnit.SECONDS.toNanos(30);

    private enum State { STARTING, STANDING, LEADING, ENDED }

    private final String name;
    private final DistributedLock lock;
    private final LeaderCandidate candidate;
    private final Thread thread;
    private final CompletableFuture<Void> done = new CompletableFuture<>();
    // Guarded by this.
    private State state = State.STARTING;
    private boolean running = true;
    private Leadership current;

    private LeaderElection(LockProvider provider, String name, LeaderCandidate candidate) {
        this.lock = provider.lock(name);
        this.name = lock.name();
        this.candidate = candidate;
        this.thread = new Thread(this::run, "kanuki-leader-" + SafeNames.printable(this.name));
        thread.setDaemon(true);
    }

    /**
     * Joins an election as a candidate: it stands at once, on a thread of its own.
     *
     * @param provider the provider of the backend the candidates share; keep it open while the
     *     candidate takes part
     * @param name the election's name, which is the name of its lock (so {@code kanuki status NAME}
     *     shows the leader)
     * @param candidate told when this candidate is elected and when its leadership ends
     * @return the running election; close it to leave
     * @throws IllegalArgumentException when the name breaks the rules of {@link LockNames}
     * @throws IllegalStateException when the provider is closed
     */
    public static LeaderElection join(LockProvider provider, String name, LeaderCandidate candidate) {
        Objects.requireNonNull(provider, "provider");
        Objects.requireNonNull(candidate, "candidate");
        LeaderElection election = new LeaderElection(provider, name, candidate);
        election.thread.start();
        return election;
    }

    /** {@return the election's name} */
    public String name() {
        return name;
    }

    /** {@return true while this candidate is the leader, as far as this JVM knows (no round trip)} */
    public boolean isLeader() {
        Leadership l = leadershipOrNull();
        return l != null && l.isCurrent();
    }

    /** {@return this candidate's current term, when it is the leader} */
    public Optional<Leadership> leadership() {
        Leadership l = leadershipOrNull();
        return l != null && l.isCurrent() ? Optional.of(l) : Optional.empty();
    }

    private synchronized Leadership leadershipOrNull() {
        return current;
    }

    /**
     * {@return a future completed when this candidate has left the election for good: after
     *     {@link #close()}, or when its provider was closed}
     */
    public CompletableFuture<Void> left() {
        return done.copy();
    }

    /**
     * Leaves the election: stops standing, or, when leader, tells the candidate
     * ({@link Leadership.End#RESIGNED}) and then releases the lock, so that another candidate is
     * elected at once. Returns when the election's thread is done (no callback runs after it),
     * except when called from a callback of this election, which returns at once and lets the
     * thread finish after the callback. Idempotent.
     */
    public void resign() {
        synchronized (this) {
            if (running) {
                running = false;
                if (state == State.STANDING) {
                    thread.interrupt(); // ends the wait for the lock; leaves no place in line behind
                }
                notifyAll();
            }
        }
        if (Thread.currentThread() == thread) {
            return;
        }
        boolean interrupted = false;
        while (true) {
            try {
                thread.join();
                break;
            } catch (InterruptedException e) {
                interrupted = true; // leaving must finish; keep the flag for the caller
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Same as {@link #resign()}. */
    @Override
    public void close() {
        resign();
    }

    private void run() {
        long retryNanos = FIRST_RETRY_NANOS;
        try {
            while (true) {
                synchronized (this) {
                    if (!running) {
                        return;
                    }
                    state = State.STANDING;
                }
                LockHandle handle;
                try {
                    handle = lock.acquire(FOREVER);
                } catch (IllegalStateException e) {
                    log.info("election '{}': the provider was closed; this candidate no longer stands",
                            SafeNames.printable(name));
                    return;
                } catch (LockBackendException e) {
                    log.warn("election '{}': the backend failed while standing; standing again in {} s",
                            SafeNames.printable(name), TimeUnit.NANOSECONDS.toSeconds(retryNanos), e);
                    if (!pause(retryNanos)) {
                        return;
                    }
                    retryNanos = Math.min(retryNanos * 2, LAST_RETRY_NANOS);
                    continue;
                } catch (LockException e) {
                    if (e.getCause() instanceof InterruptedException) {
                        Thread.interrupted();
                        continue; // resign() interrupted the wait; the loop's check ends it
                    }
                    throw e;
                }
                retryNanos = FIRST_RETRY_NANOS;
                lead(handle);
            }
        } catch (RuntimeException | Error e) {
            log.error("election '{}' failed; this candidate no longer stands", SafeNames.printable(name), e);
            throw e;
        } finally {
            synchronized (this) {
                state = State.ENDED;
                running = false;
                current = null;
            }
            done.complete(null);
        }
    }

    /** Holds the election's lock: tells the candidate, waits for the end of the term, tells it again. */
    private void lead(LockHandle handle) {
        synchronized (this) {
            state = State.LEADING;
            Thread.interrupted(); // an interrupt that came as the lock was granted was resign()'s
            if (!running) {
                handle.close();
                return;
            }
        }
        long epoch;
        try {
            epoch = handle.fencingToken();
        } catch (RuntimeException e) {
            // On backends that issue the token on demand, asking also checks the lock is held.
            log.warn("election '{}': no epoch for the new term ({}); standing again", SafeNames.printable(name), e.toString());
            handle.close();
            return;
        }
        Leadership term = new Leadership(name, epoch, handle);
        synchronized (this) {
            current = term;
        }
        handle.lost().whenComplete((reason, e) -> wake());
        log.info("election '{}': elected, epoch {}", SafeNames.printable(name), epoch);
        try {
            candidate.elected(term);
        } catch (RuntimeException e) {
            log.warn("election '{}': the candidate's elected() threw; it stays leader", SafeNames.printable(name), e);
        }
        Leadership.End why = awaitEnd(handle);
        term.over(why);
        log.info("election '{}': leadership of epoch {} ended: {}", SafeNames.printable(name), epoch, why);
        if (why != Leadership.End.RESIGNED) {
            handle.close(); // a lost lock: its handle still keeps this JVM's line closed
        }
        try {
            candidate.revoked(term, why);
        } catch (RuntimeException e) {
            log.warn("election '{}': the candidate's revoked() threw", SafeNames.printable(name), e);
        } finally {
            handle.close(); // after the candidate stopped: a resigning leader's work ends before the next starts
            synchronized (this) {
                current = null;
                if (why == Leadership.End.PROVIDER_CLOSED) {
                    running = false;
                }
            }
            term.end(why);
        }
    }

    private synchronized void wake() {
        notifyAll();
    }

    /** Waits, on the election's thread, until the term ends; {@return why} */
    private synchronized Leadership.End awaitEnd(LockHandle handle) {
        while (true) {
            if (!running) {
                return handle.isHeld() ? Leadership.End.RESIGNED : lostOrClosed(handle);
            }
            if (!handle.isHeld()) {
                return lostOrClosed(handle);
            }
            try {
                TimeUnit.NANOSECONDS.timedWait(this, CHECK_NANOS);
            } catch (InterruptedException e) {
                // Only resign() has reason to interrupt this thread; the flags above say what to do.
                Thread.interrupted();
            }
        }
    }

    /** A handle that is no longer held was lost, or closed by its provider's close. */
    private static Leadership.End lostOrClosed(LockHandle handle) {
        return handle.lost().isDone() ? Leadership.End.LOST : Leadership.End.PROVIDER_CLOSED;
    }

    /** Pauses before standing again; {@return false when the candidate left meanwhile} */
    private synchronized boolean pause(long nanos) {
        long until = System.nanoTime() + nanos;
        while (running) {
            long left = until - System.nanoTime();
            if (left <= 0) {
                return true;
            }
            try {
                TimeUnit.NANOSECONDS.timedWait(this, left);
            } catch (InterruptedException e) {
                Thread.interrupted();
            }
        }
        return false;
    }

    @Override
    public String toString() {
        Leadership l = leadershipOrNull();
        return "LeaderElection[" + SafeNames.printable(name) + (l != null ? ", leader, epoch " + l.epoch() : "") + "]";
    }
}
