package dev.kanuki.cli;

import dev.kanuki.LockNames;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.ProcessIdentity;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code kanuki break}: removes a lock whose holder can no longer release it, with the backend's
 * safe protocol ({@link LockProvider#breakLock}): a lock taken afresh meanwhile is never removed.
 *
 * <p>When two operators (or scripts) break the same stale lock at once, the backend lets one of
 * them act and may tell the other that the lock "changed hands"; this command then looks again
 * for a few seconds, so that the other ends with "nothing to break" instead of a false "busy".
 */
@Command(name = "break",
        mixinStandardHelpOptions = true,
        description = {
            "Remove the lock NAME when its holder is gone or its lease ran out (a stale lock), and say whose "
                    + "it was. A live lock is only removed with --force.",
            "The os strategy's locks are kernel locks: nobody can remove them, and the kernel frees them the "
                    + "moment their holder exits; break names the holder to stop instead.",
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:the lock was broken (stale, or live with --force), or it was not held: nothing to break",
            "2:usage error: bad option, lock name or backend URI",
            "3:the backend cannot break locks (os strategy: the kernel frees a lock when its holder exits, so "
                    + "stop the holder), or the backend failed; the message says which",
            "70:internal error: a bug in kanuki (--debug prints its stack trace)",
            "75:the lock is live and --force was not given; the message names its holder",
        },
        footerHeading = "%n",
        footer = {
            "--force takes the lock away from a process that may still be working under it: that process "
                    + "finds its lock lost at its next lease renewal, and break warns about it.",
            "",
            "Examples:",
            "  kanuki status -b 'file:/var/lock/app?strategy=mkdir'",
            "  kanuki break -b 'file:/var/lock/app?strategy=mkdir' nightly",
            "  kanuki break -b 'file:/var/lock/app?strategy=mkdir' --force nightly",
        })
final class BreakCommand implements Callable<Integer> {
    /** How long to look again while another breaker is at work on the same lock (it takes milliseconds). */
    private static final Duration RACE_PATIENCE = Duration.ofSeconds(5);

    @Spec
    CommandSpec spec;

    @Option(names = {"-b", "--backend"}, paramLabel = "URI",
            description = "The lock backend (default: ${DEFAULT-VALUE}).")
    String backend = LockProvider.DEFAULT_URI;

    @Option(names = "--force", description = "Also break a live lock; its holder then finds it lost.")
    boolean force;

    @Option(names = "--json", description = "On success, print one JSON object: the lock as it was just "
            + "before (the fields of status --json), plus outcome (broken or not-held) and forced.")
    boolean json;

    @Parameters(index = "0", paramLabel = "NAME", description = "The lock to break.")
    String name;

    @Override
    public Integer call() throws InterruptedException {
        name = LockNames.validate(name);
        Optional<Path> missing = LocalDirectory.missing(backend);
        if (missing.isPresent()) {
            // Opening the backend would create the directory: nothing can be held in one that is not there.
            KanukiCli.printError(spec.commandLine(), "no such directory " + Display.safe(missing.get().toString())
                    + ": no lock is held there");
            report(new LockStatus(name, LockStatus.State.FREE, Optional.empty(), -1), Display.strategy(backend));
            return ExitCodes.OK;
        }
        SqliteNative.prepareFor(backend);
        try (LockProvider provider = LockProvider.open(backend)) {
            LockStatus before;
            try {
                before = breakPatiently(provider);
            } catch (IllegalStateException e) {
                KanukiCli.printError(spec.commandLine(), KanukiCli.oneLine(e.getMessage()));
                return ExitCodes.BUSY;
            } catch (UnsupportedOperationException e) {
                KanukiCli.printError(spec.commandLine(), KanukiCli.oneLine(e.getMessage()));
                return ExitCodes.BACKEND;
            }
            if (before.state() == LockStatus.State.UNKNOWN
                    && provider.status(name).state() == LockStatus.State.UNKNOWN) {
                // The backend leaves entries it cannot read as its own (a planted file or link) alone.
                KanukiCli.printError(spec.commandLine(), "lock '" + Display.safe(name) + "' has an entry kanuki "
                        + "cannot read as a lock (a damaged record, or a file it did not make); nothing was "
                        + "removed: inspect the lock directory");
                return ExitCodes.BACKEND;
            }
            report(before, Display.strategy(provider.uri()));
            return ExitCodes.OK;
        }
    }

    /**
     * Breaks the lock; when the backend says it changed hands while a racing breaker removed it,
     * looks again until that breaker is done.
     */
    private LockStatus breakPatiently(LockProvider provider) throws InterruptedException {
        long deadline = System.nanoTime() + RACE_PATIENCE.toNanos();
        long pauseMillis = 5;
        while (true) {
            try {
                return provider.breakLock(name, force);
            } catch (IllegalStateException e) {
                // Live (HELD, UNKNOWN): give the backend's answer. Stale or free now: a racing
                // breaker is at work, or has just finished; the next look tells which.
                LockStatus.State now = provider.status(name).state();
                boolean racing = now == LockStatus.State.STALE || now == LockStatus.State.FREE;
                if (!racing || System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(pauseMillis);
                pauseMillis = Math.min(pauseMillis * 2, 200);
            }
        }
    }

    private void report(LockStatus before, String strategy) {
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        Instant now = Instant.now();
        boolean broken = before.state() != LockStatus.State.FREE;
        // Without --force the backend only breaks stale locks, whatever state it reported.
        boolean live = force && before.isHeld();
        OwnerInfo owner = broken ? before.owner().orElse(null) : null;
        String lock = "lock '" + Display.safe(name) + "'";
        if (live) {
            err.println("kanuki: warning: --force broke a live lock: its holder"
                    + (owner == null ? "" : ", pid " + owner.pid() + " on " + Display.safe(owner.host()) + ",")
                    + " will find its lock lost, and may still be working on what the lock guarded");
            err.flush();
        }
        if (json) {
            out.println(StatusCommand.Row.of(before, strategy, now).toJson()
                    .field("outcome", broken ? "broken" : "not-held")
                    .field("forced", live));
        } else if (!broken) {
            out.println(lock + " is not held; nothing to break");
        } else if (before.state() == LockStatus.State.UNKNOWN) {
            out.println("broke " + lock + " (its owner record could not be read)");
        } else {
            String whose = owner == null ? "" : " of pid " + owner.pid() + " on " + Display.safe(owner.host());
            out.println("broke " + (live ? "live " : "stale ") + lock + whose
                    + " (" + (live ? "--force" : staleReason(owner, now)) + ")");
        }
        out.flush();
    }

    /** @return why the lock was stale, as far as its owner record tells */
    private static String staleReason(OwnerInfo owner, Instant now) {
        if (owner == null) {
            return "owner unknown";
        }
        Long left = Display.leaseLeftMillis(owner, now);
        if (left != null && left < 0) {
            return "lease ran out " + Display.duration(-left) + " ago";
        }
        if (ProcessIdentity.isDeadLocalProcess(owner.host(), owner.pid())) {
            return "its process is gone from this host";
        }
        return "stale";
    }
}
