package dev.kanuki.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.RedisServer;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@link Locked @Locked} on a real redis-server (kanuki-testkit starts one on a free loopback
 * port): another process's holder makes a call skip, and a lock taken away behind its holder
 * interrupts the method.
 */
@Tag("servers")
@Tag("slow")
class LockedRedisTest {

    @Test
    void anotherClientsHolderMakesTheCallSkipAndALostLockInterruptsTheMethod() {
        String uri = RedisServer.shared().kanukiUri();
        new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(KanukiAutoConfiguration.class))
                .withPropertyValues("kanuki.uri=" + uri, "kanuki.lease=6s", "kanuki.options.timeout=30s",
                        "kanuki.locked.prefix=redis-test/")
                .withBean(Worker.class)
                .run(context -> {
                    Worker worker = context.getBean(Worker.class);
                    ExecutorService thread = Executors.newSingleThreadExecutor();
                    // a loaded machine: a generous connect timeout
                    try (LockProvider otherServer = LockProvider.open(uri + "?timeout=30s")) {
                        try (LockHandle held = otherServer.lock("redis-test/report").acquire(Duration.ofSeconds(30))) {
                            assertThat(worker.report()).as("skipped: another client holds it").isNull();
                        }
                        assertThat(worker.report()).isEqualTo("reported");

                        Future<String> running = thread.submit(worker::longJob);
                        await().atMost(Duration.ofSeconds(60)).until(() -> Worker.holding != null);
                        otherServer.breakLock("redis-test/long", true); // taken away behind the holder
                        assertThat(running.get(60, TimeUnit.SECONDS)).isEqualTo("interrupted, held false");
                    } finally {
                        thread.shutdownNow();
                    }
                });
    }

    static class Worker {
        static volatile LockHandle holding;

        @Locked("report")
        public String report() {
            return "reported";
        }

        @Locked(value = "long", onLost = Locked.OnLost.INTERRUPT)
        public String longJob() {
            holding = LockedContext.current();
            try {
                Thread.sleep(120_000);
                return "slept";
            } catch (InterruptedException e) {
                return "interrupted, held " + LockedContext.current().isHeld();
            }
        }
    }
}
