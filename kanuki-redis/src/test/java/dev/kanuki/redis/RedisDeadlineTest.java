package dev.kanuki.redis;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.RedisServer;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * An acquisition keeps its caller's deadline when the server stops answering (SIGSTOP), however
 * long the URI's per-command {@code timeout}: the bound is the deadline plus a generous slack for
 * a loaded machine.
 */
@Tag("servers")
class RedisDeadlineTest {
    @Test
    void anAcquisitionKeepsItsDeadlineWithTheServerPaused() throws Exception {
        try (RedisServer own = RedisServer.start();
             LockProvider locks = LockProvider.open(own.kanukiUri() + "?timeout=20s")) {
            // connected (acquire, not tryAcquire: a single attempt has about 1 s, which a first
            // connection on a loaded machine can take)
            locks.lock("paused").acquire(Duration.ofSeconds(60)).close();
            own.pause();
            try {
                long start = System.nanoTime();
                LockBackendException e = assertThrows(LockBackendException.class,
                        () -> locks.lock("paused").acquire(Duration.ofSeconds(2)));
                long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
                assertTrue(took < 2_000 + 3_000, "acquire(2s) on a paused server took " + took + "ms: " + e.getMessage());
            } finally {
                own.resume();
            }
        }
    }
}
