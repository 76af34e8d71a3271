package dev.kanuki.engine;

import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The engine's threads, shared by every provider in the JVM. All are daemon threads, so an
 * application never hangs at exit because of kanuki. None is started per waiter. Every pool lets
 * its idle threads end after {@value #IDLE_SECONDS} s, and no thread carries its creator's context
 * class loader: once the last provider is closed and its work is done, no kanuki thread is left
 * to keep a redeployed application's class loader alive.
 *
 * <ul>
 *   <li>{@link #timer()}: one thread that only schedules (retry pauses, async timeouts, the
 *       lease watchdog's ticks); it never calls a backend.</li>
 *   <li>{@link #workers()}: {@value #WORKERS_MAX} threads for short work: an asynchronous
 *       waiter's next attempt, handing a lock to a waiter (its future's callbacks run here), the
 *       watchdog's ticks. Work queues when they are busy.</li>
 *   <li>{@link #blockers()}: threads parked in a backend's blocking wait. The pool itself has no
 *       bound; each provider's {@link WaitSlots} bounds how many of them it uses.</li>
 *   <li>{@link #checkers()}: the watchdog's parallel lease checks, at most a few per provider.</li>
 * </ul>
 */
final class EngineExecutors {
    static final int WORKERS_MAX = 4;
    /** How long an idle engine thread lives. */
    static final int IDLE_SECONDS = 5;

    private static final ScheduledThreadPoolExecutor TIMER = timer("kanuki-timer");
    private static final ExecutorService WORKERS = bounded("kanuki-worker", WORKERS_MAX);
    private static final ExecutorService BLOCKERS = elastic("kanuki-waiter");
    private static final ExecutorService CHECKERS = elastic("kanuki-check");

    private EngineExecutors() {
    }

    static ScheduledThreadPoolExecutor timer() {
        return TIMER;
    }

    static ExecutorService workers() {
        return WORKERS;
    }

    static ExecutorService blockers() {
        return BLOCKERS;
    }

    static ExecutorService checkers() {
        return CHECKERS;
    }

    private static ScheduledThreadPoolExecutor timer(String name) {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, daemon(name));
        timer.setRemoveOnCancelPolicy(true);
        timer.setKeepAliveTime(IDLE_SECONDS, TimeUnit.SECONDS);
        timer.allowCoreThreadTimeOut(true);
        return timer;
    }

    private static ExecutorService bounded(String name, int threads) {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(threads, threads, IDLE_SECONDS, TimeUnit.SECONDS,
                new LinkedBlockingQueue<>(), daemon(name));
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    /** Grows with its callers' own bounds; idle threads end. */
    private static ExecutorService elastic(String name) {
        return new ThreadPoolExecutor(0, Integer.MAX_VALUE, IDLE_SECONDS, TimeUnit.SECONDS, new SynchronousQueue<>(),
                daemon(name));
    }

    /** A single-thread executor, for callers that need ordered background work; its thread ends when idle. */
    static ExecutorService single(String name) {
        ThreadPoolExecutor pool = new ThreadPoolExecutor(1, 1, IDLE_SECONDS, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                daemon(name));
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread t = new Thread(task, prefix + "-" + count.incrementAndGet());
            t.setDaemon(true);
            t.setContextClassLoader(null); // not the application's loader of whoever started it
            return t;
        };
    }
}
