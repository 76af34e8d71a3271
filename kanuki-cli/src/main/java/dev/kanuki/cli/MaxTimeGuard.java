package dev.kanuki.cli;

import dev.kanuki.spi.Durations;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * {@code kanuki run --max-time}: ends a command that runs too long, as {@code timeout(1)} does
 * (SIGTERM, then SIGKILL after {@code --kill-after} if it still runs). The lock stays held until
 * the command is gone: {@code run} releases it only after the command has exited, so a command
 * that ignores SIGTERM never runs without the lock.
 */
final class MaxTimeGuard {
    private final CommandProcess command;
    private final Duration maxTime;
    private final Duration killAfter;
    private volatile Instant termSent;
    private volatile Instant killSent;

    private MaxTimeGuard(CommandProcess command, Duration maxTime, Duration killAfter) {
        this.command = command;
        this.maxTime = maxTime;
        this.killAfter = killAfter;
    }

    /**
     * Starts the clock on its own daemon thread (it only waits for the command's exit).
     *
     * @param command the running command
     * @param maxTime how long it may run
     * @param killAfter how long after SIGTERM it gets SIGKILL
     * @return the guard
     */
    static MaxTimeGuard start(CommandProcess command, Duration maxTime, Duration killAfter) {
        MaxTimeGuard guard = new MaxTimeGuard(command, maxTime, killAfter);
        Thread clock = new Thread(guard::watch, "kanuki-max-time");
        clock.setDaemon(true);
        clock.start();
        return guard;
    }

    private void watch() {
        if (command.awaitExit(maxTime)) {
            return;
        }
        termSent = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        command.signal("TERM");
        if (!command.awaitExit(killAfter)) {
            killSent = Instant.now().truncatedTo(ChronoUnit.MILLIS);
            command.signal("KILL");
        }
    }

    /** {@return true when the command ran past its maximum time and was signalled} */
    boolean fired() {
        return termSent != null;
    }

    /**
     * @param commandName CMD as the user wrote it
     * @param lockName the lock's printable name
     * @return the one line that says what was done, once the command is gone and the lock released
     */
    String report(String commandName, String lockName) {
        Instant kill = killSent;
        return "kanuki: '" + commandName + "' ran past --max-time " + Durations.format(maxTime) + ": sent SIGTERM at "
                + termSent + (kill != null ? ", SIGKILL at " + kill + " (it ignored SIGTERM for "
                        + Durations.format(killAfter) + ")" : "")
                + "; lock '" + lockName + "' released after it exited";
    }
}
