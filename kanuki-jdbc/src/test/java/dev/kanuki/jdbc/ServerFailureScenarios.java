package dev.kanuki.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockLostException;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.LockUri;
import dev.kanuki.testkit.ServerProcess;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What happens to held locks when the database server dies or restarts, against a real server
 * this class owns (so killing it disturbs no other test). Subclasses say which server.
 *
 * <p>The promises: the holder's {@code lost()} completes; nobody is granted the lock while a
 * holder from before the restart could still believe it holds it (the restart grace); fencing
 * tokens keep increasing across the crash; a waiter blocked in the server fails instead of
 * hanging.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("servers")
@Tag("slow")
abstract class ServerFailureScenarios {
    /** The engine verifies session locks every second; allow for a slow machine. */
    static final Duration NOTICE_BOUND = Duration.ofSeconds(6);
    static final Duration GRACE = Duration.ofSeconds(3);
    /**
     * How far below the grace the server's own uptime may read at a grant: MySQL and MariaDB
     * report it in whole seconds. The uptime is the server's clock, so a slow start on a loaded
     * machine (crash recovery before it answers) does not count against the grace, as it would
     * with a stopwatch started when the server answers.
     */
    static final Duration UPTIME_ROUNDING = Duration.ofSeconds(1);

    /** @return this class's server, started by the subclass in {@code @BeforeAll} */
    abstract ServerProcess server();

    /** @return the database the scenarios use on it */
    abstract String database();

    /** @return how long the server has been up, by its own clock (whole seconds where it only says that) */
    abstract Duration serverUptime() throws SQLException;

    private void assertGrantedAfterTheGrace(String what) throws SQLException {
        Duration uptime = serverUptime(); // read after the grant: never less than the uptime at the grant
        assertTrue(uptime.compareTo(GRACE.minus(UPTIME_ROUNDING)) >= 0,
                what + " granted when the server had been up " + uptime.toMillis() + " ms, inside the restart grace of "
                        + GRACE.toMillis() + " ms");
    }

    /** @return a URI of the scenarios' database, with {@code restartGrace} as given */
    String uri(Duration restartGrace) {
        return server().kanukiUri(database()) + "&restartGrace=" + restartGrace.toMillis() + "ms";
    }

    void killServer() {
        server().kill();
    }

    void stopServer() {
        server().stop();
    }

    void restartServer() {
        server().restart();
    }

    @Test
    void killedServerLosesTheLockAndFencingKeepsIncreasing() throws Exception {
        String uri = uri(GRACE);
        awaitGraceOver(uri);
        try (LockProvider holder = LockProvider.open(uri)) {
            LockHandle h = holder.lock("job").acquire(Duration.ofSeconds(5));
            long before = h.fencingToken();
            CompletableFuture<LockLostException> lost = h.lost();
            killServer();
            LockLostException reason = lost.get(NOTICE_BOUND.toMillis(), TimeUnit.MILLISECONDS);
            assertTrue(reason.getMessage().contains("job"), reason.getMessage());
            assertFalse(h.isHeld());
            assertThrows(LockLostException.class, h::verify);
            assertThrows(LockBackendException.class, () -> holder.lock("other").tryAcquire(),
                    "with the server down, nothing can be granted");
            h.close(); // closing a lost handle is harmless, and lets this JVM's next holder in
            restartServer();
            try (LockProvider next = LockProvider.open(uri);
                 LockHandle again = next.lock("job").acquire(Duration.ofSeconds(30))) {
                assertGrantedAfterTheGrace("'job'");
                assertTrue(again.fencingToken() > before, "token " + again.fencingToken() + " after " + before);
            }
            // the first provider's idle connections died with the server: it recovers by itself
            try (LockHandle mine = holder.lock("job").acquire(Duration.ofSeconds(10))) {
                assertTrue(mine.fencingToken() > before + 1);
            }
        }
    }

    @Test
    void restartedServerLosesTheLockAndFencingKeepsIncreasing() throws Exception {
        String uri = uri(GRACE);
        awaitGraceOver(uri);
        try (LockProvider holder = LockProvider.open(uri)) {
            LockHandle h = holder.lock("report").acquire(Duration.ofSeconds(5));
            long before = h.fencingToken();
            stopServer();
            h.lost().get(NOTICE_BOUND.toMillis(), TimeUnit.MILLISECONDS);
            h.close();
            restartServer();
            try (LockHandle again = holder.lock("report").acquire(Duration.ofSeconds(30))) {
                assertTrue(again.fencingToken() > before, "token " + again.fencingToken() + " after " + before);
                LockStatus status = holder.status("report");
                assertEquals(LockStatus.State.HELD, status.state());
                assertEquals(again.fencingToken(), status.lastFencingToken());
            }
        }
    }

    /**
     * Tokens are issued on demand: a holder that never asks writes nothing, one that asks after
     * releasing is told to ask while holding, and one whose session was ended gets no token (the
     * write checks the lock in the same statement). Names whose holders ask get their token with
     * the acquisition, until a holder does not use it.
     */
    @Test
    void tokensAreIssuedOnDemandAndOnlyToAHolder() throws Exception {
        awaitGraceOver(uri(GRACE));
        LockUri parsed = LockUri.parse(uri(GRACE));
        try (SqlLockBackend backend = JdbcLockBackendFactory.create(parsed, null)) {
            Grant silent = backend.tryAcquire(request("demand/job")).orElseThrow();
            assertTrue(silent.issuedToken().isEmpty(), "a name never fenced gets no token with its acquisition");
            backend.release(silent);
            IllegalStateException late = assertThrows(IllegalStateException.class, silent::fencingToken);
            assertTrue(late.getMessage().contains("while holding the lock"), late.getMessage());
            assertEquals(0, backend.status("demand/job").lastFencingToken(), "a holder that did not ask wrote a token");

            Grant first = backend.tryAcquire(request("demand/job")).orElseThrow();
            long token = first.fencingToken();
            assertEquals(token, first.fencingToken(), "asking twice gives the same token");
            backend.release(first);

            // Holders of this name ask: the next ones get their token with the acquisition, tried or waited for.
            Grant eager = backend.tryAcquire(request("demand/job")).orElseThrow();
            assertEquals(token + 1, eager.issuedToken().orElseThrow(), "issued with the try");
            assertEquals(token + 1, eager.fencingToken());
            backend.release(eager);
            Grant waited = backend.awaitAcquire(request("demand/job"), Duration.ofSeconds(5)).orElseThrow();
            assertEquals(token + 2, waited.issuedToken().orElseThrow(), "issued with the wait");
            backend.release(waited); // not asked: back to tokens on demand
            Grant unused = backend.tryAcquire(request("demand/job")).orElseThrow();
            assertTrue(unused.issuedToken().isEmpty(), "a holder did not use its token: no more eager tokens");
            backend.release(unused);
            assertEquals(token + 2, backend.status("demand/job").lastFencingToken());

            Grant ended = backend.tryAcquire(request("demand/job")).orElseThrow();
            backend.breakLock("demand/job", true); // ends the holder's session, as an operator would
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (backend.status("demand/job").isHeld()) { // the server ends a session asynchronously
                assertTrue(System.nanoTime() < deadline, "the ended session still holds the lock");
                Thread.sleep(20);
            }
            assertThrows(LockLostException.class, ended::fencingToken);
            backend.release(ended);
            assertEquals(token + 2, backend.status("demand/job").lastFencingToken(),
                    "a session that lost its lock must not take a token");
        }
    }

    /**
     * At the SPI, without the engine's in-JVM queue: a second client asks for the lock the moment
     * the server is back, before the first client's next check.
     */
    @Test
    void quickRestartGrantsNothingUntilTheOldHolderKnows() throws Exception {
        String uri = uri(GRACE);
        awaitGraceOver(uri);
        try (SqlLockBackend first = JdbcLockBackendFactory.create(LockUri.parse(uri), null);
             SqlLockBackend second = JdbcLockBackendFactory.create(LockUri.parse(uri), null)) {
            Grant old = first.tryAcquire(request("quick")).orElseThrow();
            long oldToken = old.fencingToken();
            killServer();
            restartServer(); // back at once: faster than the holder's next check
            assertTrue(second.tryAcquire(request("quick")).isEmpty(),
                    "granted while the old holder may still believe it holds the lock");
            assertFalse(first.verify(old), "the old holder's check must see the loss");
            Optional<Grant> taken = second.awaitAcquire(request("quick"), Duration.ofSeconds(30));
            assertTrue(taken.isPresent());
            assertGrantedAfterTheGrace("'quick'");
            assertTrue(taken.get().fencingToken() > oldToken);
            second.release(taken.get());
            first.release(old); // harmless after the loss
        }
    }

    static LockRequest request(String name) {
        return new LockRequest(name, LockMode.EXCLUSIVE, 1, Duration.ofSeconds(30));
    }

    /** At the SPI: (in one JVM the engine would queue the waiter behind the holder, not in the server). */
    @Test
    void waiterBlockedInTheServerFailsWhenItDies() throws Exception {
        String uri = uri(GRACE);
        awaitGraceOver(uri);
        try (SqlLockBackend first = JdbcLockBackendFactory.create(LockUri.parse(uri), null);
             SqlLockBackend second = JdbcLockBackendFactory.create(LockUri.parse(uri), null)) {
            Grant held = first.tryAcquire(request("blocked")).orElseThrow();
            CompletableFuture<Optional<Grant>> waiting = CompletableFuture.supplyAsync(() -> {
                try {
                    return second.awaitAcquire(request("blocked"), Duration.ofSeconds(60));
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            Thread.sleep(300);
            assertFalse(waiting.isDone(), "the waiter did not block");
            long start = System.nanoTime();
            killServer();
            ExecutionException e = assertThrows(ExecutionException.class, () -> waiting.get(30, TimeUnit.SECONDS));
            assertTrue(e.getCause() instanceof LockBackendException, "expected a backend failure, got " + e.getCause());
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(10), "the waiter hung");
            assertFalse(first.verify(held));
            first.release(held);
            restartServer();
        }
    }

    /**
     * A server that stops answering (its connections stall, as a paused server's or a black
     * hole's do): an acquisition on an open provider gives up by its deadline, and closing a held
     * handle returns within seconds, not after the statements' 30 s network timeout.
     */
    @Test
    void anAcquisitionKeepsItsDeadlineWhenTheServerStopsAnswering() throws Exception {
        String uri = uri(GRACE);
        awaitGraceOver(uri);
        try (dev.kanuki.testkit.TcpProxy proxy = dev.kanuki.testkit.TcpProxy.to(server().host(), server().port());
             LockProvider locks = LockProvider.open(uri.replace(":" + server().port() + "/", ":" + proxy.port() + "/"))) {
            locks.lock("stalled").acquire(Duration.ofSeconds(30)).close(); // connected, an idle session kept
            proxy.stall();
            long start = System.nanoTime();
            assertThrows(dev.kanuki.LockException.class, () -> locks.lock("stalled").acquire(Duration.ofSeconds(2)));
            long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertTrue(took < 2_000 + 3_000, "acquire(2s) with the server not answering took " + took + "ms");
            proxy.resume();
            LockHandle held = locks.lock("stalled").acquire(Duration.ofSeconds(30));
            proxy.stall();
            start = System.nanoTime();
            held.close(); // the unlock is not answered: its connection is closed instead
            took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            // a check of the lock in progress (at most VERIFY_TIMEOUT_MILLIS) may come first
            assertTrue(took < SqlLockBackend.VERIFY_TIMEOUT_MILLIS + SqlLockBackend.ACQUIRE_SLACK_MILLIS + 3_000,
                    "closing a held handle with the server not answering took " + took + "ms");
            proxy.resume();
        }
    }

    /** Waits until a provider on {@code uri} can grant (the server may have just been restarted by another test). */
    private static void awaitGraceOver(String uri) throws InterruptedException {
        try (LockProvider p = LockProvider.open(uri)) {
            p.lock("warm-up").acquire(Duration.ofSeconds(30)).close();
        }
    }
}
