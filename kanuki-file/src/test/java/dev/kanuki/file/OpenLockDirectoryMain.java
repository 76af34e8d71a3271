package dev.kanuki.file;

import dev.kanuki.LockProvider;
import java.time.Duration;

/**
 * A child process for tests that must run without root's power to write anywhere: opens a
 * provider on {@code args[0]}, takes and releases a lock, and prints {@code OK} or the
 * exception's class and message.
 */
public final class OpenLockDirectoryMain {
    private OpenLockDirectoryMain() {
    }

    public static void main(String[] args) {
        try (LockProvider provider = LockProvider.open(args[0])) {
            provider.lock("probe").acquire(Duration.ofSeconds(5)).close();
            System.out.println("OK");
        } catch (RuntimeException e) {
            System.out.println(e.getClass().getName() + ": " + e.getMessage());
        }
    }
}
