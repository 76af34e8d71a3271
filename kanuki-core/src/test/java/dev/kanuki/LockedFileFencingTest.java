package dev.kanuki;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.spi.BackendProviders;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockRequest;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A holder of a {@link LockedFile} is paused at each step of its update while its lock is taken
 * away and a newer holder updates the file; when it resumes, the newer holder's content survives
 * — in the versions every holder reads and in the plain file.
 */
class LockedFileFencingTest {
    @TempDir
    Path dir;

    @AfterEach
    void noHook() {
        LockedFile.stepHook = null;
    }

    /** A lock store in this JVM from which a test can take a lock away behind its holder. */
    static final class Store {
        final Map<String, Long> holders = new ConcurrentHashMap<>();
        final AtomicLong tokens = new AtomicLong();
    }

    record StoreGrant(String name, long token) implements Grant {
        @Override
        public long fencingToken() {
            return token;
        }
    }

    /** One view of the store; two views have different scopes, so the engine queues them apart. */
    static final class StoreBackend implements LockBackend {
        private final Store store;
        private final String scope;

        StoreBackend(Store store, String scope) {
            this.store = store;
            this.scope = scope;
        }

        @Override
        public Capabilities capabilities() {
            return Capabilities.builder(LeaseKind.SESSION).build();
        }

        @Override
        public String scope() {
            return scope;
        }

        @Override
        public Optional<Grant> tryAcquire(LockRequest request) {
            long token = store.tokens.incrementAndGet();
            return store.holders.putIfAbsent(request.name(), token) == null
                    ? Optional.of(new StoreGrant(request.name(), token)) : Optional.empty();
        }

        @Override
        public void release(Grant grant) {
            StoreGrant g = (StoreGrant) grant;
            store.holders.remove(g.name(), g.token());
        }

        @Override
        public boolean verify(Grant grant) {
            StoreGrant g = (StoreGrant) grant;
            return Long.valueOf(g.token()).equals(store.holders.get(g.name()));
        }

        @Override
        public LockStatus status(String name) {
            Long token = store.holders.get(name);
            return new LockStatus(name, token == null ? LockStatus.State.FREE : LockStatus.State.HELD, Optional.empty(),
                    token == null ? -1 : token);
        }

        @Override
        public void close() {
        }
    }

    @ParameterizedTest
    @EnumSource(LockedFile.Step.class)
    void aHolderPausedAtAnyStepNeverOverwritesANewerHolder(LockedFile.Step pauseAt) throws Exception {
        Store store = new Store();
        Path board = dir.resolve("board.txt");
        Files.writeString(board, "v0\n");
        try (LockProvider first = BackendProviders.open("store:a", new StoreBackend(store, "store:a"));
             LockProvider second = BackendProviders.open("store:b", new StoreBackend(store, "store:b"))) {
            LockedFile late = LockedFile.of(first.lock("board"), board);
            LockedFile newer = LockedFile.of(second.lock("board"), board);
            CountDownLatch paused = new CountDownLatch(1);
            CountDownLatch resume = new CountDownLatch(1);
            Thread[] lateThread = new Thread[1];
            LockedFile.stepHook = step -> {
                if (step == pauseAt && Thread.currentThread() == lateThread[0] && paused.getCount() > 0) {
                    paused.countDown();
                    try {
                        resume.await(30, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            };
            CompletableFuture<String> lateUpdate = new CompletableFuture<>();
            lateThread[0] = new Thread(() -> {
                try {
                    lateUpdate.complete(late.updateText(Duration.ofSeconds(5), text -> text + "late\n"));
                } catch (Throwable t) {
                    lateUpdate.completeExceptionally(t);
                }
            });
            lateThread[0].start();
            assertTrue(paused.await(10, TimeUnit.SECONDS), "the late holder never reached " + pauseAt);

            store.holders.remove("board"); // its lease ran out, as during a long GC pause
            String newerContent = newer.updateText(Duration.ofSeconds(5), text -> text + "newer\n");
            resume.countDown();

            boolean lateWrote;
            try {
                lateUpdate.get(30, TimeUnit.SECONDS);
                lateWrote = true;
            } catch (ExecutionException e) {
                assertTrue(e.getCause() instanceof LockLostException, "the late holder failed with " + e.getCause());
                lateWrote = false;
            }
            String expected = lateWrote ? "v0\nlate\nnewer\n" : "v0\nnewer\n";
            // The late holder may write only when it committed before the newer holder read.
            assertEquals(pauseAt.compareTo(LockedFile.Step.COMMITTED) >= 0, lateWrote,
                    "paused at " + pauseAt + ": late write " + (lateWrote ? "accepted" : "refused"));
            assertEquals(expected, newerContent, "the newer holder's update");
            assertEquals(expected, newer.read(Duration.ofSeconds(5), b -> new String(b, StandardCharsets.UTF_8)),
                    "what the next holder reads");
            assertEquals(expected, Files.readString(board), "the plain file");
        }
    }
}
