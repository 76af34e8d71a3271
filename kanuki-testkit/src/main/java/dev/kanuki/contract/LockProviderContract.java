package dev.kanuki.contract;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;
import static org.awaitility.Awaitility.await;

import dev.kanuki.Capabilities;
import dev.kanuki.DistributedLock;
import dev.kanuki.DistributedReadWriteLock;
import dev.kanuki.DistributedSemaphore;
import dev.kanuki.FencedResource;
import dev.kanuki.FencedWriteRefusedException;
import dev.kanuki.LeaseKind;
import dev.kanuki.LockBackendException;
import dev.kanuki.LockException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockLostException;
import dev.kanuki.LockProvider;
import dev.kanuki.LockSet;
import dev.kanuki.LockStatus;
import dev.kanuki.LockTimeoutException;
import dev.kanuki.LockedFile;
import dev.kanuki.Locks;
import dev.kanuki.torture.Torture;
import dev.kanuki.torture.TortureOptions;
import dev.kanuki.torture.TortureResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.Lock;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The contract every backend passes. A backend's test extends this class, names its scheme with
 * {@link ContractFor}, and says how to make a fresh URI; everything else is here. Parts a backend
 * declares it cannot do (through {@link Capabilities}) are skipped with the reason.
 *
 * <p>Cross-process parts start real JVMs ({@link HolderProcess}, {@link Torture}); timing checks
 * have explicit, generous margins because CI machines are noisy.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
public abstract class LockProviderContract {
    /** How late a timeout may end and still pass: generous, CI machines are noisy. */
    protected static final Duration TIMING_SLACK = Duration.ofMillis(1500);

    /** A fresh directory for each test, deleted after it. */
    @TempDir
    protected Path tempDir;
    /** The provider of {@link #uri}, opened before each test and closed after it. */
    protected LockProvider provider;
    /** A lock name of this test's own, {@code contract/} followed by the test method's name. */
    protected String lockName;

    /** For the subclass of a backend's test; the same as the constructor Java would add. */
    public LockProviderContract() {
    }

    /**
     * Makes the backend URI each test of the contract uses.
     *
     * @param tempDir a fresh directory for this test
     * @return a URI for a backend no other test uses
     */
    protected abstract String uri(Path tempDir);

    /**
     * Checks that a backend created nothing outside its own storage, after hostile names were
     * used. Backends with a directory override this.
     *
     * @param tempDir the test's directory
     * @throws Exception when the check cannot read the store
     */
    protected void assertNothingOutside(Path tempDir) throws Exception {
    }

    @BeforeEach
    void openProvider(TestInfo info) {
        provider = LockProvider.open(uri(tempDir));
        lockName = "contract/" + info.getTestMethod().map(m -> m.getName()).orElse("test");
    }

    @AfterEach
    void closeProvider() {
        if (provider != null) {
            provider.close();
        }
    }

    /**
     * The capabilities of the provider under test.
     *
     * @return {@link #provider}'s capabilities
     */
    protected Capabilities caps() {
        return provider.capabilities();
    }

    /**
     * The store of {@link #uri} with a short lease, for backends whose locks live by a lease
     * that must be renewed. The default adds the engine's {@code lease} option to the URI of
     * backends whose {@link Capabilities#leaseKind()} is {@link LeaseKind#TTL}.
     *
     * @param lease the lease to use
     * @return the URI, or empty when the backend's locks have no lease to renew
     */
    protected Optional<String> shortLeaseUri(Duration lease) {
        if (caps().leaseKind() != LeaseKind.TTL) {
            return Optional.empty();
        }
        String base = provider.uri().contains("***") ? uri(tempDir) : provider.uri();
        return Optional.of(base + (base.contains("?") ? "&" : "?") + "lease=" + lease.toMillis() + "ms");
    }

    /**
     * The store of {@link #uri} moved to a loopback port where nothing listens, for backends that
     * talk to servers. The default replaces the host and port part of a {@code scheme://} URI
     * (every server of a list) and keeps user, path and options; backends without a server
     * ({@code file:}, {@code sqlite:}, {@code mem:}) have none.
     *
     * @param closedPort a loopback port that refuses connections
     * @return the URI, or empty when the backend has no server
     */
    protected Optional<String> refusingUri(int closedPort) {
        String base = uri(tempDir);
        int scheme = base.indexOf("://");
        if (scheme < 0) {
            return Optional.empty();
        }
        int from = scheme + 3;
        int end = base.length();
        for (char c : new char[] {'/', '?', '#'}) {
            int i = base.indexOf(c, from);
            if (i >= 0 && i < end) {
                end = i;
            }
        }
        int at = base.lastIndexOf('@', end - 1);
        String user = at >= from ? base.substring(from, at + 1) : "";
        return Optional.of(base.substring(0, from) + user + "127.0.0.1:" + closedPort + base.substring(end));
    }

    /**
     * Takes a held lock away behind its holder, the way an operator or a failure would for this
     * backend. The default breaks it by force through another provider on the same store; a
     * backend whose locks cannot be broken that way overrides this (ending the holder's server
     * session, deleting the key…) or leaves the test skipped.
     *
     * @param uri the store's URI (as the holder opened it)
     * @param name the lock's name
     * @param holder the holder's handle, for backends that need to find its session
     * @throws org.opentest4j.TestAbortedException (through an assumption) when the backend has no way
     * @throws Exception when taking the lock away fails
     */
    protected void takeAway(String uri, String name, LockHandle holder) throws Exception {
        try (LockProvider other = LockProvider.open(uri)) {
            other.breakLock(name, true);
        } catch (UnsupportedOperationException e) {
            assumeTrue(false, provider.uri() + ": its locks cannot be taken from a live holder (" + e.getMessage()
                    + "); a backend test overrides takeAway() when there is a way");
        }
    }

    /**
     * How soon a holder learns that its lock was taken away ({@code lost()} completes), as the
     * backend documents it. The default: within the lease for ttl backends (the watchdog renews
     * every third of it), within a few seconds for session backends (checked every second).
     *
     * @param lease the lease the holder's provider uses
     * @return the bound, without the test's timing slack
     */
    protected Duration lostWithin(Duration lease) {
        return caps().leaseKind() == LeaseKind.TTL ? lease : Duration.ofSeconds(3);
    }

    /** Skips the test, with the reason, when the backend's locks do not reach other processes. */
    protected void assumeCrossProcess() {
        assumeTrue(caps().crossProcess(), provider.uri() + " is in-process only: no other process can see its locks");
    }

    // ------------------------------------------------------------------ exclusion

    /** How many status reads in the other process must run beside the tries, so that the test could fail. */
    private static final int MIN_READS = 20;
    /** How many tries beside the status loop may end without an answer in time (a loaded machine) before the test fails. */
    private static final int MAX_SLOW_TRIES = 20;

    /**
     * Watching a lock never makes an acquisition fail: a {@code status} loop in another process
     * (as {@code kanuki status} in a loop) beside a {@code tryAcquire} loop on a lock nobody else
     * takes must cause no busy answer. An inspection that tries the lock to see whether it is
     * held, however briefly, fails this.
     */
    @Test
    void inspectionInAnotherProcessNeverMakesATryFail() throws Exception {
        assumeTrue(caps().crossProcess(), provider.uri() + " is not shared with other processes");
        final int tries = 1_000;
        DistributedLock lock = provider.lock(lockName);
        lock.tryAcquire().orElseThrow().close(); // whatever the store keeps for a name exists before the watcher looks
        Path stop = tempDir.resolve("status-loop.stop");
        Path errors = tempDir.resolve("status-loop.err");
        String javaCommand = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process watcher = new ProcessBuilder(javaCommand, "-cp", System.getProperty("java.class.path"),
                StatusLoopMain.class.getName(), uri(tempDir), lockName, stop.toString())
                .redirectError(errors.toFile()).start();
        int busy = 0;
        int made = 0;
        List<String> slow = new ArrayList<>();
        long reads;
        java.util.concurrent.atomic.AtomicLong readsSoFar = new java.util.concurrent.atomic.AtomicLong();
        try (java.io.BufferedReader out = new java.io.BufferedReader(new java.io.InputStreamReader(
                watcher.getInputStream(), java.nio.charset.StandardCharsets.UTF_8))) {
            assertEquals("READY", out.readLine(), () -> "the status loop did not start: " + readQuietly(errors));
            Thread progress = new Thread(() -> {
                try {
                    for (String line; (line = out.readLine()) != null; ) {
                        readsSoFar.set(Long.parseLong(line.trim()));
                    }
                } catch (java.io.IOException | NumberFormatException e) {
                    // the status loop ended; its exit value says how
                }
            }, "status-loop-progress");
            progress.setDaemon(true);
            progress.start();
            // At least `tries` tries, and on until the other process has read the status a few
            // dozen times beside them: on a loaded machine its start can take most of a run of tries.
            long giveUp = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (made < tries || (readsSoFar.get() < MIN_READS && System.nanoTime() < giveUp)) {
                Optional<LockHandle> handle;
                try {
                    handle = lock.tryAcquire();
                } catch (dev.kanuki.LockBackendException e) {
                    // A try without waiting has one second for its round trip; a store starved of
                    // CPU on a loaded machine (etcd, fsyncing beside two busy loops) can miss it.
                    // That is an honest error, not a wrong answer: this test is about wrong busy
                    // answers, so such a try is made again, and many of them fail the test.
                    slow.add(e.getMessage());
                    assertTrue(slow.size() <= MAX_SLOW_TRIES, () -> slow.size() + " tries did not get an answer: " + slow);
                    continue;
                }
                made++;
                if (handle.isEmpty()) {
                    busy++;
                } else {
                    handle.get().close();
                }
            }
            Files.createFile(stop);
            assertTrue(watcher.waitFor(60, TimeUnit.SECONDS), "the status loop did not stop");
            progress.join(TimeUnit.SECONDS.toMillis(10));
            assertEquals(0, watcher.exitValue(), () -> "the status loop failed: " + readQuietly(errors));
            reads = readsSoFar.get();
        } finally {
            watcher.destroyForcibly();
        }
        // the watcher must have run beside the tries, or this test could not fail
        assertTrue(reads >= MIN_READS, "only " + reads + " status reads ran beside " + made + " tries in 120 s");
        assertEquals(0, busy, busy + " of " + made + " tries of a free lock saw it busy beside " + reads
                + " status reads in another process");
    }

    private static String readQuietly(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    /**
     * A server that refuses connections (nothing listens on its port) fails opening or the first
     * call at once with a {@link LockBackendException}, long before the caller's deadline: no
     * client library's reconnect loop waits for a server that is not there.
     */
    @Test
    void aRefusedConnectionFailsAtOnce() throws Exception {
        int port;
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            port = socket.getLocalPort(); // closed again at once: nothing listens there now
        }
        Optional<String> refusing = refusingUri(port);
        assumeTrue(refusing.isPresent(), provider.uri() + " talks to no server whose connections could be refused");
        long start = System.nanoTime();
        LockException e = assertThrows(LockException.class, () -> {
            try (LockProvider other = LockProvider.open(refusing.get())) {
                other.lock(lockName).acquire(Duration.ofSeconds(20));
            }
        });
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertTrue(e instanceof LockBackendException, "not a backend error: " + e);
        assertTrue(took < 1_000 + 2 * TIMING_SLACK.toMillis(), "a refused connection took " + took
                + "ms to fail (acquire(20s)): " + e.getMessage());
    }

    @Test
    void exclusionBetweenThreads() throws Exception {
        DistributedLock lock = provider.lock(lockName);
        int threads = 8;
        int iterations = 200;
        int[] counter = {0};
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger maxInside = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            done.add(pool.submit(() -> {
                for (int i = 0; i < iterations; i++) {
                    try (LockHandle h = lock.acquire(Duration.ofSeconds(30))) {
                        int now = inside.incrementAndGet();
                        maxInside.accumulateAndGet(now, Math::max);
                        int read = counter[0];
                        Thread.yield();
                        counter[0] = read + 1;
                        inside.decrementAndGet();
                    }
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        pool.shutdown();
        assertEquals(1, maxInside.get(), "two threads were inside the lock at once");
        assertEquals(threads * iterations, counter[0], "updates were lost under the lock");
    }

    @Test
    void exclusionBetweenProcesses() throws Exception {
        assumeCrossProcess();
        TortureResult result = Torture.run(new TortureOptions(provider.uri(), lockName, 4, 150,
                tempDir.resolve("torture"), Duration.ZERO, Duration.ofSeconds(60)), null);
        assertTrue(result.workerErrors().isEmpty(), "workers failed: " + result.workerErrors());
        assertEquals(0, result.overlaps(), "the overlap log shows two holders at once");
        assertEquals(0, result.fencingViolations(), "fencing tokens did not increase from holder to holder");
        assertEquals(result.expected(), result.actual(), "updates were lost across processes");
    }

    // ------------------------------------------------------------------ try-lock and timeouts

    @Test
    void tryAcquireFailsWhileHeldInThisJvm() throws Exception {
        DistributedLock lock = provider.lock(lockName);
        try (LockHandle held = lock.acquire(Duration.ofSeconds(5))) {
            Optional<LockHandle> other = CompletableFuture.supplyAsync(lock::tryAcquire).get(30, TimeUnit.SECONDS);
            assertTrue(other.isEmpty(), "tryAcquire succeeded while another thread held the lock");
            assertTrue(lock.tryAcquire().isEmpty(), "the lock is not reentrant; a second tryAcquire must fail");
        }
        Optional<LockHandle> after = lock.tryAcquire();
        assertTrue(after.isPresent(), "tryAcquire failed after the holder released");
        after.get().close();
    }

    @Test
    void tryAcquireFailsWhileHeldByAnotherProcess() throws Exception {
        assumeCrossProcess();
        DistributedLock lock = provider.lock(lockName);
        try (HolderProcess holder = HolderProcess.start(provider.uri(), lockName, "exclusive", tempDir.resolve("holder.err"))) {
            assertTrue(lock.tryAcquire().isEmpty(), "tryAcquire succeeded while another process held the lock");
            holder.close();
            try (LockHandle h = lock.acquire(Duration.ofSeconds(10))) {
                assertTrue(h.fencingToken() > holder.token(), "fencing token did not increase after the other process");
            }
        }
    }

    @Test
    void acquireTimesOutWithinMargin() throws Exception {
        DistributedLock lock = provider.lock(lockName);
        try (LockHandle held = lock.acquire(Duration.ofSeconds(5))) {
            Duration timeout = Duration.ofMillis(400);
            long start = System.nanoTime();
            Future<?> attempt = Executors.newSingleThreadExecutor().submit(() -> lock.acquire(timeout));
            ExecutionException e = assertThrows(ExecutionException.class, () -> attempt.get(30, TimeUnit.SECONDS));
            long elapsed = System.nanoTime() - start;
            assertTrue(e.getCause() instanceof LockTimeoutException, "expected a timeout, got " + e.getCause());
            assertTrue(elapsed >= timeout.toNanos(), "gave up early: " + elapsed / 1_000_000 + "ms");
            assertTrue(elapsed < timeout.plus(TIMING_SLACK).toNanos(), "gave up late: " + elapsed / 1_000_000 + "ms");
            assertTrue(e.getCause().getMessage().contains(lockName), "the message names the lock: " + e.getCause().getMessage());
        }
    }

    @Test
    void tryAcquireWithTimeoutWaitsForAnotherProcess() throws Exception {
        assumeCrossProcess();
        DistributedLock lock = provider.lock(lockName);
        try (HolderProcess holder = HolderProcess.start(provider.uri(), lockName, "exclusive", tempDir.resolve("holder.err"))) {
            long start = System.nanoTime();
            assertTrue(lock.tryAcquire(Duration.ofMillis(300)).isEmpty(), "acquired a lock another process holds");
            long elapsed = System.nanoTime() - start;
            // Generous upper bound: the first wait of a provider may also connect (a pub/sub channel, a watch).
            assertTrue(elapsed >= Duration.ofMillis(300).toNanos()
                            && elapsed < Duration.ofMillis(300).plus(TIMING_SLACK.multipliedBy(3)).toNanos(),
                    "timeout not honoured: " + elapsed / 1_000_000 + "ms");
            CompletableFuture<LockHandle> waiting = lock.acquireAsync(Duration.ofSeconds(30));
            Thread.sleep(100);
            assertFalse(waiting.isDone(), "async acquire completed while another process held the lock");
            holder.close();
            waiting.get(30, TimeUnit.SECONDS).close();
        }
    }

    // ------------------------------------------------------------------ fencing

    @Test
    void fencingTokensIncreaseFromHolderToHolder() {
        DistributedLock lock = provider.lock(lockName);
        long previous = Long.MIN_VALUE;
        for (int i = 0; i < 20; i++) {
            try (LockHandle h = lock.acquire(Duration.ofSeconds(5))) {
                assertTrue(h.fencingToken() > previous, "token " + h.fencingToken() + " after " + previous);
                previous = h.fencingToken();
            }
        }
    }

    @Test
    void fencingTokensSurviveReopening() {
        assumeTrue(caps().persistentFencing(), provider.uri() + " keeps no fencing state outside this JVM");
        long first;
        try (LockHandle h = provider.lock(lockName).acquire(Duration.ofSeconds(5))) {
            first = h.fencingToken();
        }
        provider.close();
        provider = LockProvider.open(uri(tempDir));
        try (LockHandle h = provider.lock(lockName).acquire(Duration.ofSeconds(5))) {
            assertTrue(h.fencingToken() > first, "token went from " + first + " to " + h.fencingToken() + " after reopening");
        }
    }

    // ------------------------------------------------------------------ release

    @Test
    void closeReleasesAndIsIdempotent() {
        DistributedLock lock = provider.lock(lockName);
        LockHandle h = lock.acquire(Duration.ofSeconds(5));
        assertTrue(h.isHeld());
        h.verify();
        h.close();
        assertFalse(h.isHeld());
        h.close();
        assertThrows(LockLostException.class, h::verify, "verify after close must fail");
        Optional<LockHandle> again = lock.tryAcquire();
        assertTrue(again.isPresent(), "close did not release the lock");
        again.get().close();
    }

    @Test
    void providerCloseReleasesItsLocks() {
        LockProvider other = LockProvider.open(provider.uri());
        LockHandle held = other.lock(lockName).acquire(Duration.ofSeconds(5));
        other.close();
        assertFalse(held.isHeld(), "a handle of a closed provider still says it is held");
        Optional<LockHandle> mine = provider.lock(lockName).tryAcquire();
        assertTrue(mine.isPresent(), "closing the provider did not release its lock");
        mine.get().close();
        assertThrows(IllegalStateException.class, () -> other.lock(lockName).tryAcquire());
    }

    @Test
    void crashedHolderIsReplaced() throws Exception {
        assumeCrossProcess();
        DistributedLock lock = provider.lock(lockName);
        HolderProcess holder = HolderProcess.start(provider.uri(), lockName, "exclusive", tempDir.resolve("holder.err"));
        assertTrue(lock.tryAcquire().isEmpty(), "the holder process does not hold the lock");
        holder.kill(); // SIGKILL: no shutdown hook, no release
        long start = System.nanoTime();
        Duration bound = caps().leaseKind() == LeaseKind.TTL ? Duration.ofSeconds(35) : Duration.ofSeconds(5);
        try (LockHandle h = lock.acquire(bound)) {
            long waited = (System.nanoTime() - start) / 1_000_000;
            if (caps().leaseKind() == LeaseKind.SESSION) {
                assertTrue(waited < 2000, "a session lock of a killed process should free at once, took " + waited + "ms");
            }
            assertTrue(h.fencingToken() > holder.token(), "fencing token did not increase after the crash");
        }
    }

    // ------------------------------------------------------------------ close and interrupt

    @Test
    void providerCloseEndsEveryWaiterAndLeavesNothingHeld() throws Exception {
        String base = baseUri();
        String held = lockName + "/held";
        String prefix = lockName + "/busy-";
        int names = 3;
        // Two blocking-wait slots for three busy names: one waiter per name contends, two of them
        // block in the backend (on backends that wait by blocking) and one finds no slot and pauses.
        LockProvider closing = LockProvider.open(withParam(base, "waitThreads=2&lease=" + LONG_LEASE));
        List<SyncWaiter> sync = new ArrayList<>();
        List<CompletableFuture<LockHandle>> async = new ArrayList<>();
        try (Holders busy = Holders.hold(this, base, prefix, names, closing)) {
            LockHandle holder = closing.lock(held).acquire(Duration.ofSeconds(10));
            for (int i = 0; i < names; i++) {
                DistributedLock lock = closing.lock(prefix + i);
                sync.add(SyncWaiter.start(lock, "busy-" + i + "-a"));
                sync.add(SyncWaiter.start(lock, "busy-" + i + "-b"));
                async.add(lock.acquireAsync(Duration.ofSeconds(60)));
            }
            sync.add(SyncWaiter.start(closing.lock(held), "behind-holder"));
            async.add(closing.lock(held).acquireAsync(Duration.ofSeconds(60)));
            sync.forEach(SyncWaiter::awaitWaiting);

            CompletableFuture.runAsync(closing::close).get(30, TimeUnit.SECONDS); // bounded, documented 10 s

            for (SyncWaiter w : sync) {
                w.assertEndedWith(IllegalStateException.class, "provider close");
            }
            for (CompletableFuture<LockHandle> f : async) {
                assertEndedWith(f, IllegalStateException.class, "provider close");
            }
            assertFalse(holder.isHeld(), "the holder's handle still says it is held after close()");
            busy.releaseAll();
            assertFreeNow(base, held, prefix, names);
        }
    }

    @Test
    void interruptedWaitersEndAndLeaveNothingBehind() throws Exception {
        String base = baseUri();
        String prefix = lockName + "/busy-";
        int names = 2;
        // One blocking-wait slot: the first waiter on busy-0 blocks in the backend (on backends that
        // wait by blocking), a second one queues behind it, the one on busy-1 pauses without a slot.
        try (LockProvider waiting = LockProvider.open(withParam(base, "waitThreads=1&lease=" + LONG_LEASE));
             Holders busy = Holders.hold(this, base, prefix, names, provider)) {
            SyncWaiter first = SyncWaiter.start(waiting.lock(prefix + 0), "busy-0-first");
            first.awaitWaiting();
            SyncWaiter second = SyncWaiter.start(waiting.lock(prefix + 0), "busy-0-second");
            SyncWaiter paused = SyncWaiter.start(waiting.lock(prefix + 1), "busy-1");
            second.awaitWaiting();
            paused.awaitWaiting();

            first.thread.interrupt();
            first.assertInterrupted();
            // The interrupted thread hands the lock's turn to the next waiter: the interrupt must
            // not break that waiter's backend calls (an interruptible channel closes).
            assertFalse(second.outcome.isDone(), "interrupting one waiter ended the next one: " + second.outcome.getNow(null));

            second.thread.interrupt();
            paused.thread.interrupt();
            second.assertInterrupted();
            paused.assertInterrupted();
            // Nothing keeps waiting for them: no thread stays blocked in the backend (holding a
            // connection, a place in the server's queue, a grant nobody would release).
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50))
                    .untilAsserted(() -> assertEquals(List.of(), threadsIn("awaitAcquire"),
                            "threads still blocked in the backend for interrupted waiters"));
            busy.releaseAll();
            assertFreeNow(base, null, prefix, names);
            // The interrupted waiters' own provider is not stuck either.
            for (int i = 0; i < names; i++) {
                Optional<LockHandle> again = waiting.lock(prefix + i).tryAcquire(Duration.ofSeconds(30));
                assertTrue(again.isPresent(), "the interrupted waiters' provider cannot take " + prefix + i);
                again.get().close();
            }
        }
    }

    /** {@return the names of live threads with a frame of that method name} */
    private static List<String> threadsIn(String method) {
        List<String> found = new ArrayList<>();
        Thread.getAllStackTraces().forEach((t, stack) -> {
            for (StackTraceElement e : stack) {
                if (e.getMethodName().equals(method) && e.getClassName().startsWith("dev.kanuki.")) {
                    found.add(t.getName());
                    return;
                }
            }
        });
        return found;
    }

    @Test
    void providerCloseEndsPendingAsyncAcquisitions() throws Exception {
        String base = baseUri();
        String prefix = lockName + "/busy-";
        int names = 4;
        LockProvider closing = LockProvider.open(withParam(base, "waitThreads=2&lease=" + LONG_LEASE));
        List<CompletableFuture<LockHandle>> async = new ArrayList<>();
        try (Holders busy = Holders.hold(this, base, prefix, names, closing)) {
            for (int i = 0; i < 100; i++) {
                async.add(closing.lock(prefix + (i % names)).acquireAsync(Duration.ofSeconds(60)));
            }
            assertTrue(async.stream().noneMatch(CompletableFuture::isDone), "an acquisition ended while every lock was held");
            CompletableFuture.runAsync(closing::close).get(30, TimeUnit.SECONDS);
            for (CompletableFuture<LockHandle> f : async) {
                assertEndedWith(f, IllegalStateException.class, "provider close");
            }
            assertThrows(IllegalStateException.class, () -> closing.lock(prefix + 0).acquireAsync(Duration.ofSeconds(1)),
                    "acquireAsync on a closed provider must fail at once");
            assertThrows(IllegalStateException.class, () -> closing.lock(prefix + 0).acquire(Duration.ofSeconds(1)),
                    "acquire on a closed provider must fail at once");
            busy.releaseAll();
            assertFreeNow(base, null, prefix, names);
        }
    }

    @Test
    void anInterruptedThreadStillReleasesItsLock() throws Exception {
        String base = baseUri();
        try (LockProvider holding = LockProvider.open(withParam(base, "lease=" + LONG_LEASE))) {
            CompletableFuture<Boolean> flagAfterClose = new CompletableFuture<>();
            Thread holder = new Thread(() -> {
                try {
                    LockHandle h = holding.lock(lockName).acquire(Duration.ofSeconds(10));
                    Thread.currentThread().interrupt(); // e.g. a task cancelled while it held the lock
                    h.close();
                    flagAfterClose.complete(Thread.interrupted());
                } catch (Throwable e) {
                    flagAfterClose.completeExceptionally(e);
                }
            }, "contract-interrupted-holder");
            holder.start();
            assertTrue(flagAfterClose.get(30, TimeUnit.SECONDS), "closing a handle cleared the caller's interrupt flag");
            assertFreeNow(base, lockName, lockName + "/none-", 0);
        }
    }

    /**
     * The lease of the providers that close or whose waiters are interrupted: on ttl backends a
     * lock they left behind would keep others out this long, far beyond the waits of
     * {@link #assertFreeNow}, so such a lock fails the test instead of being waited out.
     */
    private static final String LONG_LEASE = "300s";

    /** {@return this test's store URI, unredacted, for other providers and processes} */
    private String baseUri() {
        return provider.uri().contains("***") ? uri(tempDir) : provider.uri();
    }

    /** {@return the URI with these {@code key=value} options, replacing any of the same keys} */
    private static String withParam(String uri, String params) {
        String result = uri;
        for (String param : params.split("&")) {
            String key = param.substring(0, param.indexOf('=') + 1);
            result = result.replaceAll("([?&])" + java.util.regex.Pattern.quote(key) + "[^&]*&?", "$1")
                    .replaceAll("[?&]$", "");
        }
        return result + (result.contains("?") ? "&" : "?") + params;
    }

    /**
     * Checks that every name can be taken at once by another provider and, on cross-process
     * backends, by another process: within 30 s (a loaded machine starts a JVM slowly), far below
     * {@link #LONG_LEASE}, so a lock left behind by a closed provider or an interrupted waiter
     * fails this instead of being waited out.
     */
    private void assertFreeNow(String base, String held, String prefix, int names) throws Exception {
        List<String> all = new ArrayList<>();
        if (held != null) {
            all.add(held);
        }
        for (int i = 0; i < names; i++) {
            all.add(prefix + i);
        }
        if (caps().crossProcess()) {
            try (HolderProcess next = HolderProcess.start(base, all.get(0), "exclusive",
                    tempDir.resolve("next-" + System.nanoTime() + ".err"), List.of("timeout=PT30S"))) {
                // it holds the lock: that is the check
            } catch (java.io.IOException e) {
                throw new AssertionError("another process could not take '" + all.get(0) + "' within 30 s: " + e.getMessage(), e);
            }
        }
        for (String name : all) {
            Optional<LockHandle> h = provider.lock(name).tryAcquire(Duration.ofSeconds(30));
            assertTrue(h.isPresent(), "another provider could not take '" + name + "' within 30 s");
            h.get().close();
        }
    }

    private static Throwable assertEndedWith(CompletableFuture<LockHandle> f, Class<? extends Throwable> type, String after) {
        try {
            LockHandle h = f.get(30, TimeUnit.SECONDS);
            boolean heldNow = h.isHeld();
            h.close();
            throw new AssertionError("an async waiter got a handle (isHeld=" + heldNow + ") instead of ending with "
                    + type.getSimpleName() + " after " + after);
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("an async waiter was still pending 30 s after " + after);
        } catch (ExecutionException e) {
            assertTrue(type.isInstance(e.getCause()), "expected " + type.getSimpleName() + " after " + after + ", got " + e.getCause());
            return e.getCause();
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    /** A thread blocked in {@code acquire}, and what it ended with. */
    private record SyncWaiter(Thread thread, CompletableFuture<Object> outcome, AtomicBoolean interruptFlag) {
        static SyncWaiter start(DistributedLock lock, String label) {
            CompletableFuture<Object> outcome = new CompletableFuture<>();
            AtomicBoolean flag = new AtomicBoolean();
            Thread t = new Thread(() -> {
                try {
                    outcome.complete(lock.acquire(Duration.ofSeconds(60)));
                } catch (Throwable e) {
                    flag.set(Thread.currentThread().isInterrupted());
                    outcome.complete(e);
                }
            }, "contract-waiter-" + label);
            t.setDaemon(true);
            t.start();
            return new SyncWaiter(t, outcome, flag);
        }

        /**
         * Waits until the thread waits inside kanuki: parked or paused (a waiting thread state
         * with kanuki frames) or blocked in a backend's blocking wait (which a kernel or socket
         * call may show as running).
         */
        void awaitWaiting() {
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20)).until(() -> {
                if (outcome.isDone()) {
                    return true; // ended early: the checks after say how
                }
                Thread.State state = thread.getState();
                boolean kanuki = false;
                for (StackTraceElement e : thread.getStackTrace()) {
                    if (e.getMethodName().equals("awaitAcquire")) {
                        return true;
                    }
                    kanuki |= e.getClassName().startsWith("dev.kanuki.engine.");
                }
                return kanuki && (state == Thread.State.WAITING || state == Thread.State.TIMED_WAITING);
            });
        }

        /** Checks the end {@code acquire} documents for an interrupt: a LockException wrapping it, flag set again. */
        void assertInterrupted() {
            Throwable e = assertEndedWith(LockException.class, "interrupt");
            assertTrue(e.getCause() instanceof InterruptedException,
                    "acquire documents a LockException wrapping InterruptedException, got " + e);
            assertTrue(interruptFlag.get(), thread.getName() + ": the interrupt flag was not set again");
        }

        Throwable assertEndedWith(Class<? extends Throwable> type, String after) {
            Object result;
            try {
                result = outcome.get(30, TimeUnit.SECONDS);
            } catch (Exception e) {
                throw new AssertionError(thread.getName() + " was still waiting 30 s after " + after, e);
            }
            if (result instanceof LockHandle h) {
                boolean heldNow = h.isHeld();
                h.close();
                throw new AssertionError(thread.getName() + " got a handle (isHeld=" + heldNow + ") instead of ending with "
                        + type.getSimpleName() + " after " + after);
            }
            assertTrue(type.isInstance(result), thread.getName() + ": expected " + type.getSimpleName() + " after "
                    + after + ", got " + result);
            return (Throwable) result;
        }
    }

    /**
     * Locks held by someone else than the waiters' threads: another process on cross-process
     * backends (so waiters wait in the backend, not only in this JVM's queue), else handles of
     * {@code local}.
     */
    private static final class Holders implements AutoCloseable {
        private final ManyLocksHolder process;
        private final List<LockHandle> handles;

        private Holders(ManyLocksHolder process, List<LockHandle> handles) {
            this.process = process;
            this.handles = handles;
        }

        static Holders hold(LockProviderContract test, String uri, String prefix, int count, LockProvider local)
                throws java.io.IOException {
            if (test.caps().crossProcess()) {
                return new Holders(ManyLocksHolder.start(uri, prefix, count, test.tempDir.resolve("holders.err")), List.of());
            }
            List<LockHandle> handles = new ArrayList<>();
            for (int i = 0; i < count; i++) {
                handles.add(local.lock(prefix + i).acquire(Duration.ofSeconds(10)));
            }
            return new Holders(null, handles);
        }

        void releaseAll() throws java.io.IOException {
            if (process != null) {
                process.releaseAll();
            }
            handles.forEach(LockHandle::close);
        }

        @Override
        public void close() throws Exception {
            handles.forEach(LockHandle::close);
            if (process != null) {
                process.close();
            }
        }
    }

    // ------------------------------------------------------------------ leases and losses

    /** A lease short enough that a test spans several, long enough for a loaded machine. */
    protected static final Duration SHORT_LEASE = Duration.ofMillis(1500);

    @Test
    void aShortLeaseIsRenewedPastSeveralLeases() throws Exception {
        Optional<String> shortUri = shortLeaseUri(SHORT_LEASE);
        assumeTrue(shortUri.isPresent(), provider.uri() + ": locks live as long as their holder's "
                + (caps().leaseKind() == LeaseKind.IN_PROCESS ? "JVM" : "session or process") + ", with no lease to renew");
        assumeCrossProcess();
        try (LockProvider shortLived = LockProvider.open(shortUri.get())) {
            LockHandle held = shortLived.lock(lockName).acquire(Duration.ofSeconds(10));
            long heldToken = held.fencingToken(); // asked while held: some backends issue tokens on demand
            // Another process waits for it all along: it must not get it while we hold.
            CompletableFuture<HolderProcess> other = CompletableFuture.supplyAsync(() -> {
                try {
                    return HolderProcess.start(shortUri.get(), lockName, "exclusive", tempDir.resolve("waiter.err"));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            try {
                long until = System.nanoTime() + SHORT_LEASE.multipliedBy(4).toNanos();
                while (System.nanoTime() < until) {
                    assertFalse(other.isDone(), "another process took the lock while it was held: "
                            + "its lease of " + SHORT_LEASE.toMillis() + "ms was not renewed");
                    assertTrue(held.isHeld(), "the holder lost its lock though it was alive");
                    Thread.sleep(100);
                }
                held.verify();
                assertTrue(shortLived.status(lockName).isHeld(), "the store no longer records the holder");
            } finally {
                held.close();
            }
            HolderProcess next = other.get(60, TimeUnit.SECONDS);
            try {
                assertTrue(next.token() > heldToken, "fencing token did not increase after the release");
            } finally {
                next.close();
            }
        }
    }

    @Test
    void aLockTakenAwayBehindItsHolderIsReportedLost() throws Exception {
        String holderUri = shortLeaseUri(SHORT_LEASE).orElse(provider.uri().contains("***") ? uri(tempDir) : provider.uri());
        try (LockProvider holderSide = LockProvider.open(holderUri)) {
            LockHandle held = holderSide.lock(lockName).acquire(Duration.ofSeconds(10));
            long token = held.fencingToken();
            takeAway(holderUri, lockName, held);
            Duration bound = lostWithin(SHORT_LEASE).plus(TIMING_SLACK).plus(TIMING_SLACK);
            LockLostException reason;
            try {
                reason = held.lost().get(bound.toMillis(), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                held.close();
                throw new AssertionError("lost() did not complete within " + bound.toMillis()
                        + "ms of the lock being taken away", e);
            }
            assertEquals(lockName, reason.lockName());
            assertFalse(held.isHeld(), "isHeld() after lost()");
            assertThrows(LockLostException.class, held::verify, "verify() after lost()");
            if (caps().crossProcess()) {
                // Another process takes the lock before the lost holder lets go: the lost holder's
                // release must not remove the new holder's lock.
                try (HolderProcess next = HolderProcess.start(holderUri, lockName, "exclusive",
                        tempDir.resolve("next-holder.err"))) {
                    held.close();
                    Optional<LockHandle> stolen = provider.lock(lockName).tryAcquire(Duration.ofMillis(200));
                    stolen.ifPresent(LockHandle::close);
                    assertTrue(stolen.isEmpty(), "the lost holder's release freed the lock of the process that took it over");
                    assertTrue(next.token() > token, "the new holder's token is not above the lost holder's");
                }
            }
            held.close();
            try (LockHandle next = holderSide.lock(lockName).acquire(Duration.ofSeconds(30))) {
                assertTrue(next.fencingToken() > token, "the next holder's fencing token (" + next.fencingToken()
                        + ") is not above the lost holder's (" + token + ")");
            }
        }
    }

    // ------------------------------------------------------------------ maximum hold

    /** A maximum hold long enough for any backend to grant and renew, short enough to keep the suite quick. */
    protected static final Duration MAX_HOLD = Duration.ofSeconds(1);

    /**
     * A holder past its maximum hold: lost() names it, isHeld() and verify() say so, the lock is
     * released (another provider takes it at once, with a higher token), and a fenced write made
     * with the old token after the new holder wrote is refused.
     */
    @Test
    void aHolderPastItsMaximumHoldIsReleasedAndItsLateWriteRefused() throws Exception {
        FencedResource<String> resource = FencedResource.inMemory("contract resource");
        long before = System.nanoTime();
        LockHandle held = provider.lock(lockName).withMaxHold(MAX_HOLD).acquire(Duration.ofSeconds(30));
        try {
            long token = held.fencingToken();
            resource.write(held, "first");
            LockLostException reason = held.lost().get(60, TimeUnit.SECONDS);
            assertTrue(System.nanoTime() - before >= MAX_HOLD.toNanos(), "lost before its maximum hold passed");
            assertEquals(lockName, reason.lockName());
            assertTrue(reason.getMessage().contains("maximum hold of 1s passed"), reason.getMessage());
            assertFalse(held.isHeld(), "isHeld() after the maximum hold");
            LockLostException verified = assertThrows(LockLostException.class, held::verify);
            assertTrue(verified.getMessage().contains("maximum hold"), verified.getMessage());
            String otherUri = provider.uri().contains("***") ? uri(tempDir) : provider.uri();
            try (LockProvider other = LockProvider.open(otherUri);
                    LockHandle next = other.lock(lockName).acquire(Duration.ofSeconds(30))) {
                assertTrue(next.fencingToken() > token, "the next holder's token " + next.fencingToken()
                        + " is not above the expired holder's " + token);
                resource.write(next, "second");
                assertThrows(FencedWriteRefusedException.class, () -> resource.write(token, "late"),
                        "a write with the expired holder's token was stored");
                assertEquals("second", resource.read().orElseThrow().value());
            }
            held.close(); // already released: nothing happens
            held.close();
        } finally {
            held.close();
        }
    }

    /** With the opt-in, the thread holding past its maximum hold is interrupted; without it, the lock still frees. */
    @Test
    void aMaximumHoldCanInterruptTheHoldingThread() throws Exception {
        DistributedLock lock = provider.lock(lockName).withMaxHold(MAX_HOLD, true);
        CompletableFuture<String> outcome = new CompletableFuture<>();
        Thread holder = new Thread(() -> {
            try (LockHandle h = lock.acquire(Duration.ofSeconds(30))) {
                try {
                    Thread.sleep(TimeUnit.SECONDS.toMillis(110));
                    outcome.complete("slept on while holding");
                } catch (InterruptedException e) {
                    outcome.complete(h.isHeld() ? "interrupted, still held" : "interrupted");
                }
            } catch (RuntimeException e) {
                outcome.completeExceptionally(e);
            }
        }, "contract-max-hold-holder");
        holder.setDaemon(true);
        holder.start();
        assertEquals("interrupted", outcome.get(100, TimeUnit.SECONDS));
        try (LockHandle next = provider.lock(lockName).acquire(Duration.ofSeconds(30))) {
            assertTrue(next.isHeld());
        }
        assertThrows(IllegalArgumentException.class, () -> provider.lock(lockName).withMaxHold(Duration.ZERO));
    }

    // ------------------------------------------------------------------ keepStale

    private String keepingStale() {
        String base = provider.uri().contains("***") ? uri(tempDir) : provider.uri();
        return base + (base.contains("?") ? "&" : "?") + "keepStale=true";
    }

    /** A backend that cannot keep stale locks says so in its capabilities and refuses the option in one clear message. */
    @Test
    void keepStaleIsRefusedWhereStaleLocksCannotBeKept() {
        assumeFalse(caps().keepsStale(), provider.uri() + " keeps stale locks");
        String uri = keepingStale();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> LockProvider.open(uri).close());
        assertTrue(e.getMessage().startsWith("keepStale=true in '") && e.getMessage().contains("cannot keep stale locks"),
                e.getMessage());
    }

    /**
     * Under keepStale=true the lock of a SIGKILLed holder is not broken: acquirers fail with one
     * line naming the dead holder and the command that breaks it, status says STALE, and after
     * a break the lock is taken as usual.
     */
    @Test
    void aKilledHoldersLockIsKeptUnderKeepStaleUntilBroken() throws Exception {
        assumeTrue(caps().keepsStale(), provider.uri() + " cannot keep stale locks");
        assumeCrossProcess();
        String uri = keepingStale();
        try (LockProvider keeping = LockProvider.open(uri)) {
            HolderProcess holder = HolderProcess.start(uri, lockName, "exclusive", tempDir.resolve("holder.err"));
            long pid = holder.pid();
            assertTrue(keeping.lock(lockName).tryAcquire().isEmpty(), "a live holder's lock must read as busy");
            holder.kill(); // SIGKILL: no release
            LockBackendException refused = assertThrows(LockBackendException.class,
                    () -> keeping.lock(lockName).tryAcquire(Duration.ofSeconds(60)).ifPresent(LockHandle::close),
                    "the stale lock was broken or waited out");
            String message = refused.getMessage();
            assertFalse(message.contains("\n"), message);
            assertTrue(message.contains("'" + lockName + "' is stale and kept") && message.contains("pid " + pid + " on ")
                    && message.contains(" since ") && message.contains("kanuki break -b "), message);
            LockStatus status = keeping.status(lockName);
            assertEquals(LockStatus.State.STALE, status.state());
            assertEquals(pid, status.owner().orElseThrow().pid());
            assertThrows(LockBackendException.class, () -> keeping.lock(lockName).tryAcquire(), "kept only once");
            keeping.breakLock(lockName, false);
            try (LockHandle next = keeping.lock(lockName).acquire(Duration.ofSeconds(30))) {
                assertTrue(next.fencingToken() > holder.token(), "fencing token did not increase after the break");
            }
        }
    }

    // ------------------------------------------------------------------ names

    @Test
    void hostileNamesStayInside() throws Exception {
        List<String> names = List.of("../escape", "../../etc/passwd", "a/b/c", "/absolute", ".", "..", "~", "a\\b",
                "con", "nul.txt", "with space", "名前/ロック", "\u202eevil", "x".repeat(1024), "\n\r\t", "*?<>|\"':");
        List<LockHandle> held = new ArrayList<>();
        try {
            for (String name : names) {
                held.add(provider.lock(name).acquire(Duration.ofSeconds(5)));
            }
            // distinct names are distinct locks
            assertTrue(provider.lock("a_b").tryAcquire().map(h -> {
                h.close();
                return true;
            }).orElse(false), "'a\\b' and 'a_b' must be different locks");
        } finally {
            held.forEach(LockHandle::close);
        }
        assertNothingOutside(tempDir);
    }

    @Test
    void canonicallyEquivalentNamesAreOneLock() throws Exception {
        String composed = "caf\u00e9-" + lockName;    // é as one code point (NFC, as typed on Linux)
        String decomposed = "cafe\u0301-" + lockName; // e + combining acute (NFD, as in macOS file names)
        assertEquals(composed, provider.lock(decomposed).name(), "a lock's name is the NFC form");
        try (LockHandle held = provider.lock(composed).acquire(Duration.ofSeconds(5))) {
            assertTrue(provider.lock(decomposed).tryAcquire().isEmpty(), "the NFD spelling took a second lock");
            LockStatus status = provider.status(decomposed);
            assertTrue(status.isHeld() || status.state() == LockStatus.State.UNKNOWN, "status says " + status.state());
        }
        if (caps().crossProcess()) {
            try (HolderProcess holder = HolderProcess.start(provider.uri(), decomposed, "exclusive",
                    tempDir.resolve("nfd-holder.err"))) {
                assertTrue(provider.lock(composed).tryAcquire().isEmpty(),
                        "the NFC spelling was free while another process held the NFD one");
            }
        }
    }

    @Test
    void invalidNamesAreRejectedWithTheReason() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> provider.lock("")).getMessage().contains("empty"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> provider.lock("a\0b")).getMessage().contains("NUL"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> provider.lock("x".repeat(10_000))).getMessage()
                .contains("10000"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> provider.lock("x".repeat(1025))).getMessage()
                .contains("1024"));
        assertThrows(IllegalArgumentException.class, () -> provider.lock("bad\uD800"));
        assertThrows(NullPointerException.class, () -> provider.lock(null));
    }

    // ------------------------------------------------------------------ async

    @Test
    void manyAsyncWaitersDoNotParkAThreadEach() throws Exception {
        DistributedLock lock = provider.lock(lockName);
        int waiters = 200;
        ConcurrentLinkedQueue<Long> order = new ConcurrentLinkedQueue<>();
        AtomicInteger inside = new AtomicInteger();
        AtomicInteger overlaps = new AtomicInteger();
        List<CompletableFuture<Void>> futures = new ArrayList<>();
        int threadsBefore;
        try (LockHandle held = lock.acquire(Duration.ofSeconds(5))) {
            threadsBefore = Thread.activeCount();
            for (int i = 0; i < waiters; i++) {
                futures.add(lock.acquireAsync(Duration.ofSeconds(60)).thenAccept(h -> {
                    if (inside.incrementAndGet() > 1) {
                        overlaps.incrementAndGet();
                    }
                    order.add(h.fencingToken());
                    inside.decrementAndGet();
                    h.close();
                }));
            }
            Thread.sleep(200);
            int threadsWaiting = Thread.activeCount();
            assertTrue(threadsWaiting - threadsBefore < 20, "waiting added " + (threadsWaiting - threadsBefore)
                    + " threads for " + waiters + " waiters");
            assertTrue(futures.stream().noneMatch(CompletableFuture::isDone), "a waiter got the lock while it was held");
        }
        CompletableFuture.allOf(futures.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);
        assertEquals(0, overlaps.get(), "two async holders at once");
        assertEquals(waiters, order.size());
    }

    @Test
    void asyncAcquireTimesOut() throws Exception {
        DistributedLock lock = provider.lock(lockName);
        try (LockHandle held = lock.acquire(Duration.ofSeconds(5))) {
            long start = System.nanoTime();
            CompletableFuture<LockHandle> f = lock.acquireAsync(Duration.ofMillis(300));
            ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
            long elapsed = System.nanoTime() - start;
            assertTrue(e.getCause() instanceof LockTimeoutException, "expected a timeout, got " + e.getCause());
            // Generous upper bound: the first wait of a provider may also connect (a pub/sub channel, a watch).
            assertTrue(elapsed >= Duration.ofMillis(300).toNanos()
                            && elapsed < Duration.ofMillis(300).plus(TIMING_SLACK.multipliedBy(3)).toNanos(),
                    "timeout not honoured: " + elapsed / 1_000_000 + "ms");
        }
    }

    @Test
    void cancelledAsyncWaiterTakesNothing() throws Exception {
        DistributedLock lock = provider.lock(lockName);
        CompletableFuture<LockHandle> f;
        try (LockHandle held = lock.acquire(Duration.ofSeconds(5))) {
            f = lock.acquireAsync(Duration.ofSeconds(60));
            assertTrue(f.cancel(true));
        }
        Optional<LockHandle> mine = CompletableFuture.supplyAsync(() -> lock.tryAcquire(Duration.ofSeconds(5)))
                .get(30, TimeUnit.SECONDS);
        assertTrue(mine.isPresent(), "a cancelled waiter kept the lock");
        mine.get().close();
    }

    // ------------------------------------------------------------------ modes

    @Test
    void readersShareAndWritersExclude() throws Exception {
        assumeTrue(caps().sharedLocks(), provider.uri() + " has no shared locks");
        DistributedReadWriteLock rw = provider.readWriteLock(lockName);
        LockHandle r1 = rw.readLock().acquire(Duration.ofSeconds(5));
        LockHandle r2 = CompletableFuture.supplyAsync(() -> rw.readLock().acquire(Duration.ofSeconds(5))).get(30, TimeUnit.SECONDS);
        assertTrue(r1.isHeld() && r2.isHeld());
        assertTrue(rw.writeLock().tryAcquire().isEmpty(), "writer got in while readers held");
        assertTrue(provider.lock(lockName).tryAcquire().isEmpty(), "lock(name) is the write lock; it got in while readers held");
        r1.close();
        assertTrue(rw.writeLock().tryAcquire().isEmpty(), "writer got in while one reader still held");
        r2.close();
        try (LockHandle w = rw.writeLock().acquire(Duration.ofSeconds(5))) {
            assertTrue(CompletableFuture.supplyAsync(() -> rw.readLock().tryAcquire()).get(30, TimeUnit.SECONDS).isEmpty(),
                    "reader got in while a writer held");
        }
    }

    @Test
    void readersShareAcrossProcesses() throws Exception {
        assumeTrue(caps().sharedLocks(), provider.uri() + " has no shared locks");
        assumeCrossProcess();
        DistributedReadWriteLock rw = provider.readWriteLock(lockName);
        try (HolderProcess reader = HolderProcess.start(provider.uri(), lockName, "shared", tempDir.resolve("reader.err"))) {
            Optional<LockHandle> mine = rw.readLock().tryAcquire();
            assertTrue(mine.isPresent(), "a reader here could not join a reader in another process");
            mine.get().close();
            assertTrue(rw.writeLock().tryAcquire().isEmpty(), "writer got in while another process read");
        }
    }

    @Test
    void semaphoreAdmitsAtMostItsPermits() {
        assumeTrue(caps().semaphores(), provider.uri() + " has no semaphores");
        DistributedSemaphore semaphore = provider.semaphore(lockName, 3);
        List<LockHandle> held = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            held.add(semaphore.tryAcquire().orElseThrow(() -> new AssertionError("permit refused below the limit")));
        }
        assertTrue(semaphore.tryAcquire().isEmpty(), "a fourth permit of three was granted");
        assertTrue(provider.lock(lockName).tryAcquire().map(h -> {
            h.close();
            return true;
        }).orElse(false), "a semaphore and a lock of the same name must be unrelated");
        held.remove(0).close();
        LockHandle again = semaphore.tryAcquire().orElseThrow(() -> new AssertionError("a returned permit was not reusable"));
        again.close();
        held.forEach(LockHandle::close);
    }

    @Test
    void semaphoreCountsAcrossProcesses() throws Exception {
        assumeTrue(caps().semaphores(), provider.uri() + " has no semaphores");
        assumeCrossProcess();
        DistributedSemaphore semaphore = provider.semaphore(lockName, 2);
        try (HolderProcess other = HolderProcess.start(provider.uri(), lockName, "permit:2", tempDir.resolve("permit.err"))) {
            LockHandle mine = semaphore.tryAcquire().orElseThrow(() -> new AssertionError("second permit refused"));
            assertTrue(semaphore.tryAcquire().isEmpty(), "a third permit of two was granted across processes");
            mine.close();
        }
    }

    // ------------------------------------------------------------------ helpers

    @Test
    void javaLockViewBehavesLikeALock() throws Exception {
        Lock view = provider.lock(lockName).asJavaLock();
        view.lock();
        try {
            assertFalse(CompletableFuture.supplyAsync(view::tryLock).get(30, TimeUnit.SECONDS), "tryLock succeeded while held");
            assertThrows(ExecutionException.class,
                    () -> CompletableFuture.runAsync(view::unlock).get(30, TimeUnit.SECONDS), "unlock by a non-owner must fail");
        } finally {
            view.unlock();
        }
        assertTrue(view.tryLock(1, TimeUnit.SECONDS));
        view.unlock();
        assertThrows(IllegalMonitorStateException.class, view::unlock);
    }

    @Test
    void acquireAllInCanonicalOrderDoesNotDeadlock() throws Exception {
        DistributedLock p = provider.lock(lockName + "/P");
        DistributedLock q = provider.lock(lockName + "/Q");
        CountDownLatch start = new CountDownLatch(1);
        ExecutorService pool = Executors.newFixedThreadPool(2);
        Future<?> a = pool.submit(() -> {
            start.await();
            for (int i = 0; i < 100; i++) {
                try (LockSet set = Locks.acquireAll(Duration.ofSeconds(10), p, q)) {
                    set.verify();
                }
            }
            return null;
        });
        Future<?> b = pool.submit(() -> {
            start.await();
            for (int i = 0; i < 100; i++) {
                try (LockSet set = Locks.acquireAll(Duration.ofSeconds(10), q, p)) {
                    set.get(q.name()).verify();
                }
            }
            return null;
        });
        start.countDown();
        a.get(60, TimeUnit.SECONDS);
        b.get(60, TimeUnit.SECONDS);
        pool.shutdown();
        assertThrows(IllegalArgumentException.class, () -> Locks.acquireAll(Duration.ofSeconds(1), p, p));
    }

    @Test
    void lockedFileLosesNoUpdate() throws Exception {
        Path board = tempDir.resolve("board.txt");
        LockedFile file = LockedFile.of(provider.lock(lockName), board);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<?>> done = new ArrayList<>();
        for (int t = 0; t < 4; t++) {
            int thread = t;
            done.add(pool.submit(() -> {
                for (int i = 0; i < 25; i++) {
                    String line = "post " + thread + "-" + i + "\n";
                    file.updateText(Duration.ofSeconds(30), text -> text + line);
                }
                return null;
            }));
        }
        for (Future<?> f : done) {
            f.get();
        }
        pool.shutdown();
        assertEquals(100, Files.readAllLines(board).size(), "posts vanished from the board");
        assertEquals(100, (int) file.read(Duration.ofSeconds(5), bytes -> new String(bytes).split("\n").length));
    }

    @Test
    void statusReportsTheHolder() {
        try (LockHandle h = provider.lock(lockName).acquire(Duration.ofSeconds(5))) {
            long token = h.fencingToken(); // some backends issue tokens on demand: status shows the last one issued
            var status = provider.status(lockName);
            assertTrue(status.isHeld() || status.state() == dev.kanuki.LockStatus.State.UNKNOWN, "status says " + status.state());
            if (caps().ownerRecords()) {
                assertTrue(status.owner().isPresent(), "backend records owners but status shows none");
                assertEquals(ProcessHandle.current().pid(), status.owner().get().pid());
                assertEquals(token, status.lastFencingToken());
            }
        }
        var after = provider.status(lockName);
        assertNotEquals(dev.kanuki.LockStatus.State.HELD, after.state(), "status still says held after release");
    }

    @Test
    void listShowsAHolderInAnotherProcess() throws Exception {
        assumeCrossProcess();
        try {
            provider.list();
        } catch (UnsupportedOperationException e) {
            assumeTrue(false, provider.uri() + " cannot list its locks: " + e.getMessage());
        }
        String held = lockName + "/held";
        String free = lockName + "/free";
        try (HolderProcess holder = HolderProcess.start(provider.uri(), held, "exclusive", tempDir.resolve("list.err"))) {
            provider.lock(free).acquire(Duration.ofSeconds(5)).close();
            java.util.Map<String, dev.kanuki.LockStatus> byName = new java.util.HashMap<>();
            provider.list().forEach(st -> byName.put(st.name(), st));
            dev.kanuki.LockStatus heldStatus = byName.get(held);
            assertTrue(heldStatus != null && heldStatus.isHeld(), "a held lock is missing from the listing: " + byName.keySet());
            if (caps().ownerRecords()) {
                assertEquals(holder.pid(), heldStatus.owner().orElseThrow().pid(), "the listing names the wrong holder");
            }
            dev.kanuki.LockStatus freeStatus = byName.get(free);
            assertTrue(freeStatus == null || freeStatus.state() == dev.kanuki.LockStatus.State.FREE,
                    "a released lock is listed as " + (freeStatus == null ? null : freeStatus.state()));
        }
    }

    /**
     * Fails the test with a message; for subclasses.
     *
     * @param message why the test failed
     */
    protected static void failWith(String message) {
        fail(message);
    }
}
