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
 * application never hangs at exit because of kanuki.
 *
 * <ul>
 *   <li>{@link #timer()}: one thread that only schedules (retry pauses, async timeouts, the
 *       lease watchdog's ticks); it never calls a backend.</li>
 *   <li>{@link #workers()}: runs backend attempts for asynchronous waiters, and blocking waits.
 *       It grows with the number of contended names, not the number of waiters, because only
 *       one waiter per name contends at a time.</li>
 * </ul>
 */
final class EngineExecutors {
    private static final ScheduledThreadPoolExecutor TIMER = timer("kanuki-timer");
    private static final ExecutorService WORKERS = new ThreadPoolExecutor(0, Integer.MAX_VALUE,
            30, TimeUnit.SECONDS, new SynchronousQueue<>(), daemon("kanuki-worker"));

    private EngineExecutors() {
    }

    static ScheduledThreadPoolExecutor timer() {
        return TIMER;
    }

    static ExecutorService workers() {
        return WORKERS;
    }

    private static ScheduledThreadPoolExecutor timer(String name) {
        ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, daemon(name));
        timer.setRemoveOnCancelPolicy(true);
        return timer;
    }

    /** A single-thread executor, for callers that need ordered background work. */
    static ExecutorService single(String name) {
        return new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), daemon(name));
    }

    private static ThreadFactory daemon(String prefix) {
        AtomicInteger count = new AtomicInteger();
        return task -> {
            Thread t = new Thread(task, prefix + "-" + count.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }
}
