package dev.kanuki.file;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * A test hook that freezes a process at one step of a ttl or queue lock, with whatever that
 * step holds (its entry, its breaker lock) still held, so that a test can SIGSTOP the process
 * exactly there, or just leave it blocked. Set by system properties of the process to pause:
 * {@code kanuki.file.pauseAt=acquire|renew|release|break} and
 * {@code kanuki.file.pauseMarker=FILE}. The first time the step is reached the hook writes
 * {@code FILE} (the step and the pid) and waits until the test deletes it; it then writes
 * {@code FILE.resumed} and goes on. Later passes do not pause. With
 * {@code kanuki.file.pauseArmedBy=ARM} it pauses only once the file {@code ARM} exists (so that a
 * test can first set up a waiter, then arm the pause of the holder's next renewal).
 *
 * <p>Zero cost when unset: {@link #at} tests a {@code static final} null, which the JIT folds
 * away.
 */
final class PauseForTests {
    private static final String PAUSE_AT = System.getProperty("kanuki.file.pauseAt");
    private static final String MARKER = System.getProperty("kanuki.file.pauseMarker");
    private static final String ARM = System.getProperty("kanuki.file.pauseArmedBy");
    private static final AtomicBoolean PAUSED = new AtomicBoolean();

    private PauseForTests() {
    }

    /** Pauses here when this is the step asked for (once per process). */
    static void at(String step) {
        if (PAUSE_AT != null && PAUSE_AT.equals(step) && MARKER != null && (ARM == null || Files.exists(Path.of(ARM)))
                && PAUSED.compareAndSet(false, true)) {
            pause(step);
        }
    }

    private static void pause(String step) {
        Path marker = Path.of(MARKER);
        try {
            Files.writeString(marker, step + " " + ProcessHandle.current().pid() + "\n", StandardCharsets.UTF_8);
            // Not interruptible on purpose: the step must stay frozen until the test says so.
            while (Files.exists(marker)) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20));
            }
            Files.writeString(marker.resolveSibling(marker.getFileName() + ".resumed"), step + "\n", StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("pause hook: cannot use " + marker, e);
        }
    }
}
