package dev.kanuki.faults;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A worker process of the fault suite whose provider has a crowd of its own threads waiting for
 * the lock: {@code SYNC} threads in {@code acquire} and {@code ASYNC} futures of
 * {@code acquireAsync}, on a provider with two wait threads (so some waiters block in the backend
 * and the others are parked). In mode {@code hold} it first takes the lock itself (says
 * {@code HELD <token>}); in mode {@code wait} another process holds it. Then it says
 * {@code WAITING}. Commands on standard input:
 * <ul>
 *   <li>{@code close}: closes the provider (the holder's critical section ends just before);
 *       says {@code CLOSED <ms> granted=<n> heldAfter=<n> pending=<n> ended=<errors>};</li>
 *   <li>{@code interrupt}: interrupts the waiting threads and cancels the futures; says
 *       {@code INTERRUPTED <ms> granted=<n> pending=<n> ended=<errors>}, then closes its
 *       provider when told {@code close}.</li>
 * </ul>
 * A waiter that is handed the lock anyway logs {@code ENTER} in the referee log and stays in its
 * critical section for three seconds, so that another process taking the lock meanwhile shows as
 * an overlap. Arguments: URI NAME MODE LOG.
 */
public final class CrowdWorker {
    static final int SYNC = 6;
    static final int ASYNC = 6;
    private static final Duration END = Duration.ofSeconds(20);
    private static Path log;
    private static final AtomicInteger granted = new AtomicInteger();
    private static final List<LockHandle> handles = new ArrayList<>();
    private static final Map<String, Integer> endings = new TreeMap<>();

    private CrowdWorker() {
    }

    /**
     * @param args URI, lock name, {@code hold} or {@code wait}, referee log
     * @throws Exception on any failure (the exit code is then non-zero)
     */
    public static void main(String[] args) throws Exception {
        log = Path.of(args[3]);
        String uri = args[0] + (args[0].contains("?") ? "&" : "?") + "waitThreads=2";
        LockProvider provider = LockProvider.open(uri);
        say("ACQUIRING");
        long token = -1;
        if (args[2].equals("hold")) {
            LockHandle held = provider.lock(args[1]).acquire(Duration.ofSeconds(60));
            token = held.fencingToken();
            record("ENTER", token, "");
            say("HELD " + token);
        }
        List<Thread> threads = new ArrayList<>();
        List<CompletableFuture<?>> ended = new ArrayList<>();
        for (int i = 0; i < SYNC; i++) {
            CompletableFuture<Void> end = new CompletableFuture<>();
            ended.add(end);
            Thread t = new Thread(() -> {
                try {
                    granted(provider.lock(args[1]).acquire(Duration.ofSeconds(120)));
                } catch (Throwable e) {
                    ending(e);
                } finally {
                    end.complete(null);
                }
            }, "crowd-sync-" + i);
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        List<CompletableFuture<LockHandle>> futures = new ArrayList<>();
        for (int i = 0; i < ASYNC; i++) {
            CompletableFuture<LockHandle> future = provider.lock(args[1]).acquireAsync(Duration.ofSeconds(120));
            futures.add(future); // cancelled itself: cancelling a stage derived from it would leave the wait running
            ended.add(future
                    .handle((h, e) -> {
                        if (h != null) {
                            granted(h);
                        } else {
                            ending(e instanceof java.util.concurrent.CompletionException && e.getCause() != null ? e.getCause() : e);
                        }
                        return null;
                    }));
        }
        say("WAITING");
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            long start = System.nanoTime();
            if (line.equals("interrupt")) {
                threads.forEach(Thread::interrupt);
                futures.forEach(f -> f.cancel(true)); // an async waiter's interrupt
                int pendingAsync = awaitEnds(ended.subList(SYNC, ended.size()));
                int pending = awaitEnds(ended.subList(0, SYNC)) + pendingAsync;
                say("INTERRUPTED " + (System.nanoTime() - start) / 1_000_000 + " granted=" + granted.get()
                        + " pending=" + pending + " ended=" + endingsText());
            } else if (line.equals("close")) {
                if (token >= 0) {
                    record("EXIT", token, "close");
                }
                provider.close();
                long closeMs = (System.nanoTime() - start) / 1_000_000;
                int pending = awaitEnds(ended);
                int heldAfter;
                synchronized (handles) {
                    heldAfter = (int) handles.stream().filter(LockHandle::isHeld).count();
                }
                say("CLOSED " + closeMs + " granted=" + granted.get() + " heldAfter=" + heldAfter
                        + " pending=" + pending + " ended=" + endingsText());
                break;
            }
        }
    }

    /** @return how many did not end within {@link #END} */
    private static int awaitEnds(List<CompletableFuture<?>> ends) {
        long deadline = System.nanoTime() + END.toNanos();
        int pending = 0;
        for (CompletableFuture<?> end : ends) {
            try {
                end.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (Exception e) {
                pending++;
            }
        }
        return pending;
    }

    /** A waiter handed the lock: in its critical section for three seconds (the referee sees any overlap). */
    private static void granted(LockHandle handle) {
        granted.incrementAndGet();
        synchronized (handles) {
            handles.add(handle);
        }
        long token;
        try {
            token = handle.fencingToken();
        } catch (RuntimeException e) {
            token = -2;
        }
        long t = token;
        record("ENTER", t, "");
        Thread exit = new Thread(() -> {
            try {
                Thread.sleep(3000); // the critical section's length, not a synchronisation
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            record("EXIT", t, "crowd");
        });
        exit.start();
    }

    private static void ending(Throwable e) {
        synchronized (endings) {
            endings.merge(e.getClass().getSimpleName(), 1, Integer::sum);
        }
    }

    private static String endingsText() {
        synchronized (endings) {
            return endings.toString().replace(" ", "");
        }
    }

    private static void record(String what, long token, String why) {
        String line = what + " " + System.nanoTime() + " " + ProcessHandle.current().pid() + " " + token + " " + why + "\n";
        try {
            Files.writeString(log, line, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (java.io.IOException e) {
            say("LOG-FAILED " + e);
        }
    }

    private static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
