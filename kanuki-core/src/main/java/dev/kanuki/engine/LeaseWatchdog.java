package dev.kanuki.engine;

import dev.kanuki.LeaseKind;
import dev.kanuki.LockLostException;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps a provider's held locks alive and notices when one is lost.
 *
 * <ul>
 *   <li>ttl leases are renewed every third of the lease, so two renewals can fail before the
 *       lease runs out; a lease that could not be renewed before it ran out is lost. The lease
 *       counts from when the last confirmed renewal was <em>sent</em>, and a renewal that hangs
 *       (a stalled connection, a frozen server) does not hold the loss back: every timer tick
 *       reports lost the ttl locks whose lease ran out unconfirmed, while the check still waits.
 *       Otherwise another process could take the lock once the server lets it expire while
 *       this holder still believes it holds it.</li>
 *   <li>session leases are verified every {@link #SESSION_CHECK_NANOS}: that catches a lock
 *       file removed or replaced, or a connection that died.</li>
 * </ul>
 * A lost lock completes its handle's {@code lost()} future. The watchdog ticks on the timer and
 * does its backend calls on worker threads (up to {@value #PARALLEL_CHECKS} at once), one tick at
 * a time.
 */
final class LeaseWatchdog {
    private static final Logger log = LoggerFactory.getLogger(LeaseWatchdog.class);
    static final long SESSION_CHECK_NANOS = TimeUnit.SECONDS.toNanos(1);
    /** How many renewals or checks one tick runs at once. */
    static final int PARALLEL_CHECKS = 8;

    private final EngineLockProvider provider;
    private final boolean ttl;
    private final long intervalNanos;
    private final long leaseNanos;
    private final AtomicBoolean ticking = new AtomicBoolean();
    /**
     * Guards {@link #task}. A lock, not the monitor: scheduling may wait for the timer's own lock,
     * and a virtual thread that parks holding a monitor pins its carrier (JDK 21 to 23).
     */
    private final ReentrantLock taskLock = new ReentrantLock();
    private ScheduledFuture<?> task;

    LeaseWatchdog(EngineLockProvider provider) {
        this.provider = provider;
        this.ttl = provider.capabilities().leaseKind() == LeaseKind.TTL;
        this.leaseNanos = provider.lease.toNanos();
        this.intervalNanos = ttl ? leaseNanos / 3 : SESSION_CHECK_NANOS;
    }

    void ensureRunning() {
        taskLock.lock();
        try {
            if (task == null) {
                long period = tickNanos();
                task = EngineExecutors.timer().scheduleWithFixedDelay(
                        () -> {
                            if (ttl) {
                                loseOverdue();
                            }
                            if (ticking.compareAndSet(false, true)) {
                                EngineExecutors.checkers().execute(this::tick);
                            }
                        }, period, period, TimeUnit.NANOSECONDS);
            }
        } finally {
            taskLock.unlock();
        }
    }

    /** {@return the timer's period: a quarter of the renewal interval, at least 10 ms} */
    private long tickNanos() {
        return Math.max(TimeUnit.MILLISECONDS.toNanos(10), intervalNanos / 4);
    }

    void stop() {
        taskLock.lock();
        try {
            if (task != null) {
                task.cancel(false);
                task = null;
            }
        } finally {
            taskLock.unlock();
        }
    }

    /**
     * Runs on the timer, not behind a hanging check: a ttl lock whose lease runs out before the
     * next tick, counted from when its last confirmed renewal was sent, is lost, whatever the
     * renewal in flight will answer.
     */
    private void loseOverdue() {
        try {
            // One tick early: the next tick could come a whole period after the lease ran out, and
            // a server that counts the lease from when it got the renewal may expire it exactly then.
            long now = System.nanoTime() + tickNanos();
            for (EngineHandle handle : provider.liveHandles()) {
                if (handle.isHeld() && now - handle.lastConfirmedNanos >= leaseNanos) {
                    RuntimeException failure = handle.lastRenewalFailure;
                    String why = failure == null ? "the backend did not answer in time"
                            : "the last renewal failed: " + failure.getMessage();
                    handle.markLost(new LockLostException(handle.name(), "its lease ran out before a renewal was "
                            + "confirmed (" + why + "); another holder may have it now", failure));
                }
            }
        } catch (RuntimeException e) {
            log.warn("lease watchdog deadline check failed", e);
        }
    }

    private void tick() {
        try {
            // Shared holders of one grant: one check serves them all. Grouped once per tick, so that
            // confirming a check costs its own group, not a walk over every held lock (10,000
            // locks would cost 10^8 steps a second).
            Map<Object, List<EngineHandle>> byGrant = new IdentityHashMap<>();
            long now = System.nanoTime();
            List<List<EngineHandle>> due = new ArrayList<>();
            for (EngineHandle handle : provider.liveHandles()) {
                if (!handle.isHeld() || now - handle.lastConfirmedNanos < intervalNanos) {
                    continue;
                }
                byGrant.computeIfAbsent(handle.grant, g -> {
                    List<EngineHandle> group = new ArrayList<>(1);
                    due.add(group);
                    return group;
                }).add(handle);
            }
            checkAll(due, now);
        } catch (RuntimeException e) {
            log.warn("lease watchdog tick failed", e);
        } finally {
            ticking.set(false);
        }
    }

    /**
     * Checks the due handles, up to {@value #PARALLEL_CHECKS} at a time: a check can take seconds
     * (a dead connection is only given up on after its timeout), and one at a time would make the
     * last of n locks on a dead server wait n timeouts to be reported lost.
     */
    private void checkAll(List<List<EngineHandle>> due, long now) {
        AtomicInteger next = new AtomicInteger();
        Runnable drain = () -> {
            for (int i = next.getAndIncrement(); i < due.size(); i = next.getAndIncrement()) {
                check(due.get(i), now);
            }
        };
        int helpers = Math.min(PARALLEL_CHECKS, due.size()) - 1;
        CountDownLatch helpersDone = new CountDownLatch(Math.max(0, helpers));
        for (int h = 0; h < helpers; h++) {
            EngineExecutors.checkers().execute(() -> {
                try {
                    drain.run();
                } finally {
                    helpersDone.countDown();
                }
            });
        }
        drain.run();
        try {
            helpersDone.await(); // one tick at a time: the next starts when every check is done
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void check(List<EngineHandle> group, long now) {
        EngineHandle handle = group.get(0);
        try {
            long sent = System.nanoTime(); // the renewed lease counts from here: the server got it no earlier
            boolean held = ttl ? provider.backend.renew(handle.grant, provider.lease)
                    : provider.backend.verify(handle.grant);
            if (held) {
                group.forEach(h -> {
                    h.lastConfirmedNanos = sent;
                    h.lastRenewalFailure = null;
                });
            } else {
                lose(group, ttl ? "its lease could not be renewed: it ran out or another holder took over"
                        : "the backend no longer records this holder", null);
            }
        } catch (RuntimeException e) {
            if (!ttl || now - handle.lastConfirmedNanos >= leaseNanos) {
                lose(group, "the backend could not be reached to keep it: " + e.getMessage(), e);
            } else {
                group.forEach(h -> h.lastRenewalFailure = e);
                log.warn("renewing lock '{}' failed, will retry before the lease runs out: {}",
                        handle.name(), e.toString());
            }
        }
    }

    /** Also ends handles that joined the grant since the tick began (a rare path: one walk per loss). */
    private void lose(List<EngineHandle> group, String reason, Throwable cause) {
        Object grant = group.get(0).grant;
        for (EngineHandle h : provider.liveHandles()) {
            if (h.grant == grant) {
                h.markLost(new LockLostException(h.name(), reason, cause));
            }
        }
    }
}
