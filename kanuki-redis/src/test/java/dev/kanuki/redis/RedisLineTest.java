package dev.kanuki.redis;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.spi.ChangeSubscription;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.LockUri;
import dev.kanuki.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The line of exclusive waiters: a release hands the lock to the first waiter still listening,
 * in the release's own script, and tells it on its inbox. Each backend here stands for one JVM
 * (its own connections and inbox); the tests drive the backend as the engine does: attempt,
 * watch, attempt again, wait to be woken.
 */
@Tag("servers")
class RedisLineTest {
    private static final Duration LEASE = Duration.ofSeconds(30);
    private static RedisServer server;
    private static RedisClient admin;
    private static StatefulRedisConnection<String, String> adminConnection;
    private static RedisCommands<String, String> redis;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
        admin = RedisClient.create("redis://127.0.0.1:" + server.port());
        adminConnection = admin.connect();
        redis = adminConnection.sync();
    }

    @AfterAll
    static void stop() {
        adminConnection.close();
        admin.shutdown();
        server.close();
    }

    /** @return how many times the server ran {@code command} since the last {@code CONFIG RESETSTAT} */
    private static long calls(String command) {
        for (String line : redis.info("commandstats").split("\r?\n")) {
            if (line.startsWith("cmdstat_" + command + ":")) {
                return Long.parseLong(line.substring(line.indexOf("calls=") + 6, line.indexOf(',')));
            }
        }
        return 0;
    }

    private static LockBackend backend() {
        return new RedisLockBackendFactory().create(LockUri.parse(server.kanukiUri()));
    }

    /** An exclusive request that may wait a minute. */
    private static LockRequest waiting(String name) {
        return new LockRequest(name, LockMode.EXCLUSIVE, 1, LEASE, System.nanoTime() + TimeUnit.MINUTES.toNanos(1));
    }

    /** One waiter as the engine drives it: attempt, watch, attempt again; then it waits for {@link #woken}. */
    private static final class Waiter {
        final LockBackend backend;
        final LockRequest request;
        final CountDownLatch woken = new CountDownLatch(1);
        final ChangeSubscription watch;

        Waiter(LockBackend backend, String name) {
            this.backend = backend;
            this.request = waiting(name);
            assertTrue(backend.tryAcquire(request).isEmpty(), "the lock is held");
            this.watch = backend.watchChanges(request, woken::countDown);
            assertTrue(backend.tryAcquire(request).isEmpty(), "the lock is held");
        }

        String value() {
            return RedisLockBackend.encode(request.owner(), request.name());
        }

        Grant takeAfterWake() throws InterruptedException {
            assertTrue(woken.await(30, TimeUnit.SECONDS), "the waiter was not woken");
            Grant g = backend.tryAcquire(request).orElseThrow(() -> new AssertionError("woken, but no lock"));
            watch.cancel();
            return g;
        }
    }

    @Test
    void aReleaseHandsTheLockToTheFirstInLineWhichTakesItWithoutACommand() throws Exception {
        String name = "line";
        RedisKeys keys = RedisKeys.of(name);
        try (LockBackend holderSide = backend(); LockBackend first = backend(); LockBackend second = backend()) {
            holderSide.release(holderSide.tryAcquire(waiting("warm-up")).orElseThrow()); // loads the script
            Grant held = holderSide.tryAcquire(waiting(name)).orElseThrow();
            long heldToken = held.fencingToken();
            Waiter one = new Waiter(first, name);
            Waiter two = new Waiter(second, name);
            assertEquals(2, redis.llen(keys.queue()), "both waiters are in line");

            redis.configResetstat();
            holderSide.release(held);
            assertEquals(one.value(), redis.get(keys.lock()), "the release handed the lock to the first in line");
            Grant g1 = one.takeAfterWake();
            long commands = calls("evalsha") + calls("eval");
            assertEquals(1, commands, "the release is the only script run: the waiter took the lock without one");
            assertEquals(1, two.woken.getCount(), "the second in line is not woken for a lock it cannot have");
            assertTrue(g1.fencingToken() > heldToken, "tokens rise across a hand-over");

            first.release(g1);
            assertEquals(two.value(), redis.get(keys.lock()), "then to the second");
            Grant g2 = two.takeAfterWake();
            assertTrue(g2.fencingToken() > g1.fencingToken());
            assertTrue(second.verify(g2));
            second.release(g2);
            assertNull(redis.get(keys.lock()), "nobody in line: the release frees it");
            assertEquals(0, redis.exists(keys.queue()), "the line leaves no keys behind");
        }
    }

    @Test
    void aWaiterThatGaveUpOrWhoseProcessIsGoneIsPassedOver() throws Exception {
        String name = "passed-over";
        RedisKeys keys = RedisKeys.of(name);
        try (LockBackend holderSide = backend(); LockBackend gaveUp = backend(); LockBackend alive = backend()) {
            Grant held = holderSide.tryAcquire(waiting(name)).orElseThrow();
            Waiter quitter = new Waiter(gaveUp, name);
            LockBackend gone = backend();
            Waiter dead = new Waiter(gone, name);
            Waiter last = new Waiter(alive, name);
            assertEquals(3, redis.llen(keys.queue()));

            quitter.watch.cancel();
            gaveUp.abandon(quitter.request); // as the engine does when a waiter times out
            assertEquals(2, redis.llen(keys.queue()), "a waiter that gives up leaves the line");
            gone.close(); // its connections close, as when its process is killed; its place stays
            await().atMost(Duration.ofSeconds(10)).until(() -> redis.pubsubChannels("kanuki:inbox:*").size() == 2);

            holderSide.release(held);
            assertEquals(last.value(), redis.get(keys.lock()),
                    "the lock went past the waiter that gave up and the one whose process is gone");
            Grant g = last.takeAfterWake();
            alive.release(g);
            assertNull(redis.get(keys.lock()));
        }
    }

    @Test
    void aLockHandedToARequestThatNoLongerWaitsIsPassedOn() throws Exception {
        String name = "ghost";
        RedisKeys keys = RedisKeys.of(name);
        try (LockBackend holderSide = backend(); LockBackend listener = backend()) {
            Grant held = holderSide.tryAcquire(waiting(name)).orElseThrow();
            // a waiter that was in line when its request ended: its backend still listens on its inbox
            Waiter real = new Waiter(listener, name);
            String inbox = redis.lindex(keys.queue(), 0).split("\t")[0];
            LockRequest ended = waiting(name);
            redis.lpush(keys.queue(), inbox + "\t" + ended.owner().id() + "\t30000\t0\t" // ahead of the real waiter
                    + RedisLockBackend.encode(ended.owner(), name));

            holderSide.release(held);
            // handed to the ended request, whose backend passes it on at once: to the real waiter
            Grant g = real.takeAfterWake();
            assertEquals(real.value(), redis.get(keys.lock()));
            listener.release(g);
        }
    }

    @Test
    void theAttemptAfterSubscribingIsAnsweredHereOnlyWhenNothingWasPublished() throws Exception {
        String name = "quiet";
        RedisKeys keys = RedisKeys.of(name);
        try (LockBackend holderSide = backend(); LockBackend waiterSide = backend()) {
            Grant held = holderSide.tryAcquire(waiting(name)).orElseThrow();
            // the name's channel is subscribed already: a waiter before this one left it so
            Waiter before = new Waiter(waiterSide, name);
            before.watch.cancel();
            waiterSide.abandon(before.request);

            LockRequest quiet = waiting(name);
            assertTrue(waiterSide.tryAcquire(quiet).isEmpty());
            ChangeSubscription w = waiterSide.watchChanges(quiet, () -> { });
            redis.configResetstat();
            assertTrue(waiterSide.tryAcquire(quiet).isEmpty());
            Optional<Duration> hint = quiet.takeRetryAfter();
            assertTrue(hint.isPresent() && hint.get().compareTo(Duration.ofSeconds(20)) > 0, "hint: " + hint);
            assertEquals(0, calls("evalsha"), "nothing was published: no attempt needed");
            w.cancel();
            waiterSide.abandon(quiet);

            LockRequest noisy = waiting(name);
            assertTrue(waiterSide.tryAcquire(noisy).isEmpty());
            // the lock comes free between the attempt and the watch, as a break does: the publish
            // must not be missed
            redis.del(keys.lock());
            long receivers = redis.publish(keys.channel(), "1");
            assertTrue(receivers >= 1);
            Thread.sleep(200); // the message (most likely) reaches the waiter's connection before it watches
            CountDownLatch heard = new CountDownLatch(1);
            ChangeSubscription w2 = waiterSide.watchChanges(noisy, heard::countDown);
            Optional<Grant> g = waiterSide.tryAcquire(noisy);
            if (g.isEmpty()) {
                // answered here: then the message must still come to the watch, or the wake-up is lost
                assertTrue(heard.await(10, TimeUnit.SECONDS), "a publish after the attempt reached neither the"
                        + " attempt after subscribing nor the watch: a lost wake-up");
                g = waiterSide.tryAcquire(noisy);
            }
            assertTrue(g.isPresent(), "the lock is free");
            w2.cancel();
            waiterSide.release(g.get());
            assertFalse(holderSide.verify(held));
        }
    }

    @Test
    void aTryWithoutWaitingTakesNoPlaceInLine() {
        String name = "no-wait";
        RedisKeys keys = RedisKeys.of(name);
        try (LockBackend holderSide = backend(); LockBackend other = backend()) {
            Grant held = holderSide.tryAcquire(waiting(name)).orElseThrow();
            Waiter opener = new Waiter(other, name); // the inbox is open
            opener.watch.cancel();
            other.abandon(opener.request);
            redis.del(keys.queue());
            LockRequest once = new LockRequest(name, LockMode.EXCLUSIVE, 1, LEASE, System.nanoTime());
            assertTrue(other.tryAcquire(once).isEmpty());
            assertTrue(other.tryAcquire(once).isEmpty());
            assertEquals(0, redis.exists(keys.queue()), "a try without waiting queued: "
                    + redis.lrange(keys.queue(), 0, -1));
            holderSide.release(held);
        }
    }

    @Test
    void anAttemptThatFindsItsOwnRecordTakesTheLock() {
        // a SET NX whose reply was lost (a timeout) and that is tried again: the key holds our own
        // record, and the attempt must not wait out its own lease
        String name = "lost-reply";
        RedisKeys keys = RedisKeys.of(name);
        try (LockBackend backend = backend()) {
            LockRequest request = waiting(name);
            redis.set(keys.lock(), RedisLockBackend.encode(request.owner(), name),
                    io.lettuce.core.SetArgs.Builder.px(5_000));
            Grant g = backend.tryAcquire(request).orElseThrow(() -> new AssertionError("refused its own record"));
            assertTrue(redis.pttl(keys.lock()) > 10_000, "taken with a fresh lease of its own");
            backend.release(g);
            assertNull(redis.get(keys.lock()));
        }
    }
}
