package dev.kanuki.engine;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockProvider;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** The JVM shutdown hook exists only while a provider is open, and can be switched off. */
class ExitReleaseTest {
    @Test
    void noHookRemainsAfterTheLastProviderCloses() {
        Thread hook;
        try (LockProvider first = LockProvider.open("mem:exit-a"); LockProvider second = LockProvider.open("mem:exit-b")) {
            first.lock("x").acquire(Duration.ofSeconds(30));
            hook = ExitRelease.hook();
            assertNotNull(hook, "an open provider is released at exit");
            second.close();
            assertNotNull(ExitRelease.hook(), "one provider is still open");
        }
        assertNull(ExitRelease.hook());
        assertFalse(Runtime.getRuntime().removeShutdownHook(hook), "the JVM no longer holds the hook");
    }

    @Test
    void theSystemPropertySwitchesTheHookOff() {
        System.setProperty(ExitRelease.PROPERTY, "false");
        try (LockProvider provider = LockProvider.open("mem:exit-c")) {
            assertNull(ExitRelease.hook());
        } finally {
            System.clearProperty(ExitRelease.PROPERTY);
        }
        try (LockProvider provider = LockProvider.open("mem:exit-d")) {
            assertTrue(ExitRelease.hook() != null);
        }
    }
}
