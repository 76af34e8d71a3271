package dev.kanuki.sqlite;

import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * A second process for {@link SqliteLockTest}: waits for a start file, then tries (and releases)
 * {@code count} lock names that do not exist yet, as fast as it can, racing other processes doing
 * the same. Exit code 0 when every attempt got an answer (held or busy), 1 on any failure.
 *
 * <p>Arguments: {@code DIR START_FILE COUNT}.
 */
public final class CreateRaceMain {
    private CreateRaceMain() {
    }

    /**
     * @param args directory, start file, count
     */
    public static void main(String[] args) throws Exception {
        Path dir = Path.of(args[0]);
        Path start = Path.of(args[1]);
        int count = Integer.parseInt(args[2]);
        try (SqliteLockBackend backend = new SqliteLockBackend(dir, SqliteSettings.of("wal", "normal"))) {
            System.out.println("READY");
            System.out.flush();
            while (!Files.exists(start)) {
                Thread.onSpinWait();
            }
            for (int i = 0; i < count; i++) {
                var grant = backend.tryAcquire(new LockRequest("fresh/" + i, LockMode.EXCLUSIVE, 1, Duration.ofSeconds(30)));
                grant.ifPresent(backend::release);
            }
        } catch (RuntimeException e) {
            e.printStackTrace();
            System.exit(1);
        }
        System.exit(0);
    }
}
