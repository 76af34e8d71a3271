package dev.kanuki;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** {@link Locks#acquireAll}: duplicates refused at once, timeouts reported as given. */
class LocksTest {
    LockProvider provider;

    @BeforeEach
    void open() {
        provider = LockProvider.open("mem:" + UUID.randomUUID());
    }

    @AfterEach
    void close() {
        provider.close();
    }

    @Test
    void twoHandlesOfTheSameLockAreRefusedAtOnce() {
        IllegalArgumentException e = assertTimeoutPreemptively(Duration.ofSeconds(5), () -> assertThrows(
                IllegalArgumentException.class,
                () -> Locks.acquireAll(Duration.ofSeconds(30), provider.lock("x"), provider.lock("y"), provider.lock("x"))));
        assertTrue(e.getMessage().contains("'x' given twice"), e.getMessage());
        assertTrue(provider.lock("y").tryAcquire().isPresent(), "nothing was taken");
    }

    @Test
    void theSameLockFromTwoProvidersOnOneStoreIsTheSameLock() {
        try (LockProvider other = LockProvider.open(provider.uri())) {
            assertEquals(provider.lock("x"), other.lock("x"));
            assertThrows(IllegalArgumentException.class,
                    () -> Locks.acquireAll(Duration.ofSeconds(30), provider.lock("x"), other.lock("x")));
        }
    }

    @Test
    void differentNamesModesOrStoresAreDifferentLocks() throws Exception {
        assertNotEquals(provider.lock("x"), provider.lock("y"));
        assertNotEquals(provider.readWriteLock("x").readLock(), provider.readWriteLock("x").writeLock());
        assertNotEquals(provider.lock("x"), provider.semaphore("x", 2));
        try (LockProvider elsewhere = LockProvider.open("mem:" + UUID.randomUUID())) {
            assertNotEquals(provider.lock("x"), elsewhere.lock("x"));
            try (LockSet set = Locks.acquireAll(Duration.ofSeconds(5), provider.lock("x"), elsewhere.lock("x"))) {
                assertEquals(2, set.handles().size());
            }
        }
    }

    @Test
    void aTimeoutNamesTheTimeoutAsGiven() {
        try (LockHandle held = provider.lock("b").acquire(Duration.ofSeconds(5))) {
            LockTimeoutException e = assertThrows(LockTimeoutException.class,
                    () -> Locks.acquireAll(Duration.ofMillis(1500), provider.lock("a"), provider.lock("b")));
            assertEquals(Duration.ofMillis(1500), e.timeout());
            assertTrue(e.getMessage().contains("not obtained within 1.5s"), e.getMessage());
            assertTrue(provider.lock("a").tryAcquire().isPresent(), "the lock taken first was released");
        }
    }
}
