package dev.kanuki.cli;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.LockNames;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.LockTimeoutException;
import dev.kanuki.OwnerInfo;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code kanuki run}: runs a command while holding a lock, like {@code flock(1)}. The lock is
 * taken before the command starts and released after it exits, also when kanuki is interrupted
 * (signals go to the command, and kanuki waits for it).
 */
@Command(name = "run",
        mixinStandardHelpOptions = true,
        customSynopsis = "kanuki run [-hsV] [-b=URI] [-E=N] [-w=DURATION | -n] NAME [--] CMD [ARG...]",
        description = {
            "Run CMD while holding the lock NAME, like flock(1).",
            "CMD sees KANUKI_LOCK_NAME and KANUKI_FENCING_TOKEN in its environment. SIGINT, SIGTERM and "
                    + "SIGHUP are passed on to CMD, and the lock is held until CMD exits. Options go before NAME.",
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  kanuki run -n nightly -- ./backup.sh",
            "  kanuki run -w 30s -b file:/var/lock/app deploy -- make deploy",
        })
final class RunCommand implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    @Option(names = {"-b", "--backend"}, paramLabel = "URI",
            description = "The lock backend (default: ${DEFAULT-VALUE}).")
    String backend = LockProvider.DEFAULT_URI;

    @Option(names = {"-w", "--wait"}, paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Wait at most DURATION for the lock (e.g. 500ms, 5s, 2m).")
    Duration wait;

    @Option(names = {"-n", "--nonblock"}, description = "Fail at once when the lock is held.")
    boolean noWait;

    @Option(names = {"-s", "--shared"}, description = "Take a shared (read) lock: many holders, no writer.")
    boolean shared;

    @Option(names = {"-E", "--conflict-exit-code"}, paramLabel = "N",
            description = "Exit code when the lock is busy (default: ${DEFAULT-VALUE}).")
    int conflictExitCode = ExitCodes.BUSY;

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock's name.")
    String name;

    @Parameters(index = "1..*", paramLabel = "CMD", arity = "1..*",
            description = "The command and its arguments (after an optional --).")
    List<String> command = new ArrayList<>();

    @Override
    public Integer call() {
        List<String> cmd = commandToRun();
        if (wait != null && noWait) {
            throw new ParameterException(spec.commandLine(), "-w and -n exclude each other");
        }
        if (conflictExitCode < 0 || conflictExitCode > 255) {
            throw new ParameterException(spec.commandLine(),
                    "--conflict-exit-code must be between 0 and 255, got " + conflictExitCode);
        }
        LockNames.validate(name);
        PrintWriter err = spec.commandLine().getErr();
        try (LockProvider provider = LockProvider.open(backend)) {
            DistributedLock lock = shared ? provider.readWriteLock(name).readLock() : provider.lock(name);
            Duration timeout = noWait ? Duration.ZERO : wait != null ? wait : ChronoUnit.FOREVER.getDuration();
            LockHandle handle;
            try {
                handle = lock.acquire(timeout);
            } catch (LockTimeoutException e) {
                err.println(Display.escapeControls(busyMessage(provider, e))); // the holder's host is read from a file
                err.flush();
                return conflictExitCode;
            }
            try (handle) {
                return runHolding(handle, cmd, err);
            }
        }
    }

    /** @return the command after NAME, without the {@code --} that may separate them */
    private List<String> commandToRun() {
        List<String> cmd = new ArrayList<>(command);
        if (!cmd.isEmpty() && cmd.get(0).equals("--")) {
            cmd.remove(0);
        }
        if (cmd.isEmpty()) {
            throw new ParameterException(spec.commandLine(), "Missing the command to run after NAME");
        }
        return cmd;
    }

    private String busyMessage(LockProvider provider, LockTimeoutException e) {
        Optional<OwnerInfo> holder = e.holder();
        if (holder.isEmpty()) {
            try {
                LockStatus status = provider.status(name);
                holder = status.isHeld() ? status.owner() : Optional.empty();
            } catch (RuntimeException ignored) {
                // The holder is a courtesy; the message is complete without it.
            }
        }
        String base = "kanuki: lock '" + LockNames.printable(name) + "' is busy";
        return holder.map(h -> base + " (held by " + h.describe() + ")").orElse(base);
    }

    @SuppressWarnings("try") // the forwarder is used for its scope only
    private int runHolding(LockHandle handle, List<String> cmd, PrintWriter err) {
        ProcessBuilder builder = new ProcessBuilder(cmd).inheritIO();
        builder.environment().put("KANUKI_FENCING_TOKEN", Long.toString(handle.fencingToken()));
        builder.environment().put("KANUKI_LOCK_NAME", name);
        Process child;
        try {
            child = builder.start();
        } catch (IOException | RuntimeException e) {
            err.println("kanuki: cannot run '" + cmd.get(0) + "': " + startFailure(e));
            err.flush();
            return ExitCodes.COMMAND_NOT_FOUND;
        }
        handle.lost().thenAccept(lost -> {
            err.println("kanuki: warning: " + KanukiCli.oneLine(lost.getMessage()) + "; '" + cmd.get(0)
                    + "' is still running without it");
            err.flush();
        });
        try (SignalForwarder forwarder = SignalForwarder.to(child)) {
            boolean interrupted = false;
            while (true) {
                try {
                    int code = child.waitFor();
                    if (interrupted) {
                        Thread.currentThread().interrupt();
                    }
                    return code;
                } catch (InterruptedException e) {
                    // Keep holding the lock until the command is done.
                    interrupted = true;
                }
            }
        }
    }

    /** @return "No such file or directory" rather than Java's "Cannot run program ...: error=2, ..." */
    private static String startFailure(Exception e) {
        String message = String.valueOf(e.getMessage());
        int errno = message.indexOf("error=");
        if (errno >= 0) {
            int comma = message.indexOf(", ", errno);
            if (comma >= 0) {
                return message.substring(comma + 2);
            }
        }
        return KanukiCli.oneLine(message);
    }
}
