package dev.kanuki.cli;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.spi.Durations;
import dev.kanuki.spi.SafeNames;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What {@code kanuki run} does when its lock is lost while the command runs, like
 * {@code consul lock}: tell the command ({@code --on-lost}), print one line saying when the
 * lock was lost and who holds it now, and make kanuki exit with {@link ExitCodes#LOCK_LOST}
 * whatever the command returned. A loss first seen by the check before release (the command
 * had already exited) is reported the same way.
 */
final class LockLossGuard {

    /** What the command gets when the lock is lost. */
    enum OnLost {
        /** SIGTERM at once, SIGKILL after {@code --kill-after}. */
        TERM,
        /** SIGKILL at once. */
        KILL,
        /** Nothing: the command runs on; kanuki still reports the loss and exits 76. */
        IGNORE;

        /** The values as they are written on the command line, for shell completion. */
        static final class Names implements Iterable<String> {
            @Override
            public java.util.Iterator<String> iterator() {
                return java.util.Arrays.stream(OnLost.values()).map(v -> v.name().toLowerCase(Locale.ROOT)).iterator();
            }
        }

        /** Reads {@code term}, {@code kill} or {@code ignore}, in any case. */
        static final class Converter implements picocli.CommandLine.ITypeConverter<OnLost> {
            @Override
            public OnLost convert(String value) {
                try {
                    return OnLost.valueOf(value.trim().toUpperCase(Locale.ROOT));
                } catch (IllegalArgumentException e) {
                    throw new picocli.CommandLine.TypeConversionException(
                            "'" + value + "' is not one of term, kill, ignore");
                }
            }
        }
    }

    /** How the run ended for the lock. */
    private enum Outcome {
        /** Held until the command exited (checked with the backend). */
        HELD,
        /** Lost while the command ran, or found lost when it exited. */
        LOST
    }

    private final LockProvider provider;
    private final LockHandle handle;
    private final CommandProcess command;
    private final String commandName;
    private final OnLost onLost;
    private final Duration killAfter;
    private final PrintWriter err;
    /** Set once: by the first loss seen, or by the check before release that found the lock held. */
    private final AtomicReference<Outcome> outcome = new AtomicReference<>();
    private final CompletableFuture<Void> reported = new CompletableFuture<>();

    LockLossGuard(LockProvider provider, LockHandle handle, CommandProcess command, String commandName,
                  OnLost onLost, Duration killAfter, PrintWriter err) {
        this.provider = provider;
        this.handle = handle;
        this.command = command;
        this.commandName = commandName;
        this.onLost = onLost;
        this.killAfter = killAfter;
        this.err = err;
    }

    /** Starts reacting to {@link LockHandle#lost()}; the reaction runs on its own thread. */
    void watch() {
        handle.lost().thenAccept(reason -> {
            Thread reaction = new Thread(() -> react(why(reason), true), "kanuki-lock-lost");
            reaction.setDaemon(true);
            reaction.start();
        });
    }

    /**
     * Once the command has exited: checks with the backend that the lock is still held, and
     * waits for the loss report if it was not.
     *
     * @param commandExit the command's exit code
     * @return {@code commandExit}, or {@link ExitCodes#LOCK_LOST} when the lock was lost
     */
    int finish(int commandExit) {
        if (outcome.get() == null) {
            try {
                handle.verify();
                // A loss noticed from now on is after the command's work: the lock was held throughout.
                outcome.compareAndSet(null, Outcome.HELD);
            } catch (RuntimeException e) {
                react(why(e), false);
            }
        }
        if (outcome.get() == Outcome.HELD) {
            return commandExit;
        }
        reported.join();
        return ExitCodes.LOCK_LOST;
    }

    /** @return the reason without the "lock 'x' is no longer held: " the report line already says */
    private String why(RuntimeException e) {
        String message = KanukiCli.oneLine(e.getMessage());
        String prefix = "lock '" + SafeNames.printable(handle.name()) + "' is no longer held: ";
        return message.startsWith(prefix) ? message.substring(prefix.length()) : message;
    }

    private void react(String reason, boolean commandMayRun) {
        if (!outcome.compareAndSet(null, Outcome.LOST)) {
            return;
        }
        Instant noticed = Instant.now().truncatedTo(ChronoUnit.MILLIS);
        boolean sentTerm = false;
        try {
            String action;
            boolean running = commandMayRun && command.isAlive();
            if (!running) {
                action = "'" + commandName + "' had already exited";
            } else if (onLost == OnLost.TERM) {
                command.signal("TERM");
                sentTerm = true;
                action = "sent SIGTERM to '" + commandName + "' (SIGKILL in " + Durations.format(killAfter) + ")";
            } else if (onLost == OnLost.KILL) {
                command.signal("KILL");
                action = "sent SIGKILL to '" + commandName + "'";
            } else {
                action = "'" + commandName + "' keeps running (--on-lost=ignore)";
            }
            err.println(Display.escapeControls("kanuki: lock '" + SafeNames.printable(handle.name()) + "' was lost at "
                    + noticed + " (" + reason + "); now " + holderNow() + "; " + action));
            err.flush();
        } finally {
            reported.complete(null);
        }
        if (sentTerm && !command.awaitExit(killAfter)) {
            command.signal("KILL");
        }
    }

    /** @return who holds the lock now, for people; never throws */
    private String holderNow() {
        try {
            LockStatus status = provider.status(handle.name());
            String owner = status.owner().map(o -> o.describe()).orElse("an unknown holder");
            return switch (status.state()) {
                case FREE -> "free";
                case HELD -> "held by " + owner;
                case HELD_SHARED -> "held shared (one holder: " + owner + ")";
                case STALE -> "stale (last held by " + owner + ")";
                case UNKNOWN -> "held by an unknown holder (the backend cannot tell)";
            };
        } catch (RuntimeException e) {
            return "holder unknown (" + KanukiCli.oneLine(e.getMessage()) + ")";
        }
    }
}
