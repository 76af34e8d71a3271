package dev.kanuki.cli;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.LockNames;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.LockTimeoutException;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.Durations;
import dev.kanuki.spi.SafeNames;
import java.io.IOException;
import java.io.PrintWriter;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
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
 * (signals go to the command once, and kanuki waits for it). The command dies with kanuki
 * ({@link CommandProcess}); a lost lock terminates it and makes kanuki exit 76
 * ({@link LockLossGuard}).
 */
@Command(name = "run",
        mixinStandardHelpOptions = true,
        customSynopsis = {"kanuki run [-hsV] [-b=URI] [-E=N] [-w=DURATION|forever | -n] [--lease=DURATION]",
            "           [--on-lost=term|kill|ignore] [--kill-after=DURATION] [--max-time=DURATION]",
            "           NAME [--] CMD [ARG...]"},
        description = {
            "Run CMD while holding the lock NAME, like flock(1). Options go before NAME. CMD sees "
                    + "KANUKI_LOCK_NAME and KANUKI_FENCING_TOKEN in its environment. The lock is held until CMD "
                    + "exits; the exit code is CMD's (128+N when CMD died of signal N).",
            "",
            "kanuki dies (SIGKILL, OOM killer): CMD and the processes of its process group are SIGKILLed at once "
                    + "(Linux, with util-linux setpriv and setsid; without them kanuki warns that CMD is not "
                    + "protected).",
            "",
            "Signals: SIGINT, SIGTERM and SIGHUP sent to kanuki, or to its process group (Ctrl-C), reach CMD "
                    + "once: CMD runs in its own process group and kanuki passes them on. When kanuki is a "
                    + "terminal's foreground job, CMD stays in kanuki's group (terminal reads, Ctrl-Z work), the "
                    + "terminal delivers SIGINT and SIGHUP to both, and kanuki passes on SIGTERM only.",
            "",
            "The lock is lost while CMD runs (a lease not renewed in time, a database session ended, a lock "
                    + "broken): CMD gets --on-lost, kanuki prints one line saying when and who holds the lock now, "
                    + "and exits 76 whatever CMD returned. The lock is checked before it is released, so a loss "
                    + "while CMD finished is reported too.",
            "",
            "--max-time: CMD still running after DURATION gets SIGTERM, and SIGKILL after --kill-after; the lock is "
                    + "released once CMD is gone, kanuki says so in one line and exits 124 (as timeout(1)).",
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

    /**
     * {@code -w forever}: wait without limit, as without {@code -w}; spelled out for a standby
     * ({@code kanuki run -w forever NAME CMD} beside a running one takes over when it ends).
     */
    static final Duration FOREVER = ChronoUnit.FOREVER.getDuration();

    @Option(names = {"-w", "--wait"}, paramLabel = "DURATION", converter = WaitConverter.class,
            description = "Wait at most DURATION for the lock (e.g. 500ms, 5s, 2m), or forever (the default "
                    + "without -w or -n: a standby that runs CMD when the holder ends, even by SIGKILL).")
    Duration wait;

    /** Reads {@code -w}: a duration, or {@code forever}. */
    static final class WaitConverter implements picocli.CommandLine.ITypeConverter<Duration> {
        @Override
        public Duration convert(String value) {
            return value.equals("forever") ? FOREVER : new DurationConverter().convert(value);
        }
    }

    @Option(names = {"-n", "--nonblock"}, description = "Fail at once when the lock is held.")
    boolean noWait;

    @Option(names = {"-s", "--shared"}, description = "Take a shared (read) lock: many holders, no writer.")
    boolean shared;

    @Option(names = {"-E", "--conflict-exit-code"}, paramLabel = "N",
            description = "Exit code when the lock is busy (default: ${DEFAULT-VALUE}).")
    int conflictExitCode = ExitCodes.BUSY;

    @Option(names = "--on-lost", paramLabel = "ACTION", converter = LockLossGuard.OnLost.Converter.class,
            completionCandidates = LockLossGuard.OnLost.Names.class,
            description = "When the lock is lost while CMD runs: term (SIGTERM, then SIGKILL after --kill-after), "
                    + "kill (SIGKILL) or ignore (default: term). kanuki then exits 76 in every case.")
    LockLossGuard.OnLost onLost = LockLossGuard.OnLost.TERM;

    @Option(names = "--kill-after", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "With --on-lost=term and --max-time: SIGKILL CMD this long after SIGTERM if it still runs "
                    + "(default: 10s).")
    Duration killAfter = Duration.ofSeconds(10);

    @Option(names = "--max-time", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "Let CMD run at most DURATION: then SIGTERM, SIGKILL after --kill-after, release the lock "
                    + "once CMD is gone and exit 124.")
    Duration maxTime;

    /** Set while CMD runs with {@code --max-time}. */
    private MaxTimeGuard maxTimeGuard;

    @Option(names = "--lease", paramLabel = "DURATION", converter = DurationConverter.class,
            description = "The lease of ttl backends (the URI's lease option; default 30s): a holder that cannot "
                    + "renew it for this long loses the lock. Session backends ignore it.")
    Duration lease;

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock's name.")
    String name;

    @Parameters(index = "1..*", paramLabel = "CMD", arity = "1..*",
            description = "The command and its arguments (after an optional --).")
    List<String> command = new ArrayList<>();

    @Override
    public Integer call() {
        List<String> cmd = commandToRun();
        if (wait != null && noWait) {
            throw usage("-w and -n exclude each other");
        }
        if (conflictExitCode < 0 || conflictExitCode > 255) {
            throw usage("--conflict-exit-code must be between 0 and 255, got " + conflictExitCode);
        }
        if (maxTime != null && (maxTime.isZero() || maxTime.isNegative())) {
            throw usage("--max-time must be longer than 0, got " + Durations.format(maxTime));
        }
        if (killAfter.isNegative()) {
            throw usage("--kill-after must not be negative, got " + Durations.format(killAfter));
        }
        name = LockNames.validate(name);
        // run reports a lost lock itself, in one line; the engine's log line would repeat it.
        CliLogging.quiet("dev.kanuki.engine.EngineHandle");
        PrintWriter err = err();
        SqliteNative.prepareFor(backend);
        long start = System.nanoTime();
        Duration wait = FOREVER.equals(this.wait) ? null : this.wait; // forever: no bound, as without -w
        try (CommandProcess.Launcher launcher = CommandProcess.launcher();
                LockProvider provider = BoundedOpen.open(backendWithLease(), wait)) {
            DistributedLock lock = shared ? provider.readWriteLock(name).readLock() : provider.lock(name);
            // -w counts from the start: the time opening took is not waited again
            Duration timeout = noWait ? Duration.ZERO : wait != null
                    ? max(Duration.ZERO, wait.minusNanos(System.nanoTime() - start)) : ChronoUnit.FOREVER.getDuration();
            LockHandle handle;
            try {
                handle = lock.acquire(timeout);
            } catch (LockTimeoutException e) {
                err.println(Display.escapeControls(busyMessage(provider, e))); // the holder's host is read from a file
                err.flush();
                return conflictExitCode;
            }
            int code;
            try (handle) {
                code = runHolding(provider, handle, cmd, launcher, err);
            }
            if (maxTimeGuard != null && maxTimeGuard.fired() && code != ExitCodes.LOCK_LOST) {
                // Said after the release, so that the line is true when it is read.
                err.println(Display.escapeControls(maxTimeGuard.report(cmd.get(0), SafeNames.printable(name))));
                err.flush();
                return ExitCodes.MAX_TIME;
            }
            return code;
        }
    }

    private static Duration max(Duration a, Duration b) {
        return a.compareTo(b) >= 0 ? a : b;
    }

    /** @return standard error: picocli's, or the quick path's when no picocli model was built */
    private PrintWriter err() {
        return spec != null ? spec.commandLine().getErr() : QuickRun.err();
    }

    /** @return a usage error; on the quick path, one that sends the command line to picocli for its message */
    private RuntimeException usage(String message) {
        return spec != null ? new ParameterException(spec.commandLine(), message) : new QuickRun.Fallback(message);
    }

    /** @return the backend URI, with {@code --lease} as its {@code lease} option */
    private String backendWithLease() {
        if (lease == null) {
            return backend;
        }
        if (lease.compareTo(Duration.ofMillis(100)) < 0) {
            throw usage("--lease " + Durations.format(lease)
                    + " is too short; use at least 100ms (the lease is renewed every third of it)");
        }
        int query = backend.indexOf('?');
        if (query >= 0 && ("&" + backend.substring(query + 1)).contains("&lease=")) {
            throw usage("--lease and the URI's lease option exclude each other");
        }
        return backend + (query >= 0 ? "&" : "?") + "lease=" + lease.toMillis() + "ms";
    }

    /** @return the command after NAME, without the {@code --} that may separate them */
    private List<String> commandToRun() {
        List<String> cmd = new ArrayList<>(command);
        if (!cmd.isEmpty() && cmd.get(0).equals("--")) {
            cmd.remove(0);
        }
        if (cmd.isEmpty()) {
            throw usage("Missing the command to run after NAME");
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
        String base = "kanuki: lock '" + SafeNames.printable(name) + "' is busy";
        return holder.map(h -> base + " (held by " + h.describe() + ")").orElse(base);
    }

    private int runHolding(LockProvider provider, LockHandle handle, List<String> cmd, CommandProcess.Launcher launcher,
            PrintWriter err) {
        Optional<String> cannotRun = Executables.whyNotRunnable(cmd.get(0));
        if (cannotRun.isPresent()) {
            err.println("kanuki: cannot run '" + cmd.get(0) + "': " + cannotRun.get());
            err.flush();
            return ExitCodes.COMMAND_NOT_FOUND;
        }
        Map<String, String> environment = Map.of(
                "KANUKI_FENCING_TOKEN", Long.toString(handle.fencingToken()),
                "KANUKI_LOCK_NAME", name);
        try (SignalForwarder forwarder =
                SignalForwarder.install(CommandProcess.forwardedSignals(launcher.isolation()))) {
            CommandProcess child;
            try {
                // Started from this thread, which waits for it below: the parent-death signal is
                // tied to the thread that started the command.
                child = launcher.start(cmd, environment);
            } catch (IOException | RuntimeException e) {
                err.println("kanuki: cannot run '" + cmd.get(0) + "': " + startFailure(e));
                err.flush();
                return ExitCodes.COMMAND_NOT_FOUND;
            }
            child.warning().ifPresent(w -> {
                err.println("kanuki: " + w);
                err.flush();
            });
            LockLossGuard guard = new LockLossGuard(provider, handle, child, cmd.get(0), onLost, killAfter, err);
            guard.watch();
            if (maxTime != null) {
                maxTimeGuard = MaxTimeGuard.start(child, maxTime, killAfter);
            }
            forwarder.attach(child::signal);
            int code;
            try {
                code = child.waitUninterruptibly();
            } finally {
                child.stopWatching();
            }
            return guard.finish(code);
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
