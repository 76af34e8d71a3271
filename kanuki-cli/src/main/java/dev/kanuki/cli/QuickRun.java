package dev.kanuki.cli;

import dev.kanuki.spi.Durations;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * {@code kanuki run} without picocli, for the start-up time of cron jobs and scripts. Building
 * picocli's model of the command takes longer than the rest of a run (its classes are too old
 * for the JVM's class-data sharing, and it reads every annotation by reflection), so the plain
 * forms of {@code run}'s command line are read here, into the same {@link RunCommand}.
 *
 * <p>Anything else goes to picocli, which owns the help, the messages and every rule: an option
 * this class does not know (help, version, an option added to {@link RunCommand} later), a
 * repeated option, clustered short options, a value that does not convert, or a usage error
 * found by {@link RunCommand#call()} before it takes the lock.
 */
final class QuickRun {
    private static PrintWriter err;

    private QuickRun() {
    }

    /** A usage error found on the quick path: picocli parses the command line again and reports it. */
    static final class Fallback extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Fallback(String message) {
            super(message, null, false, false);
        }
    }

    /** @return standard error for messages of the quick path (picocli's writer is not built) */
    static synchronized PrintWriter err() {
        if (err == null) {
            err = new PrintWriter(System.err, true);
        }
        return err;
    }

    /**
     * Runs {@code kanuki run ...} when this class can read its command line.
     *
     * @param args the whole command line, starting with {@code run}
     * @return the exit code, or null when picocli must take this command line
     */
    static Integer execute(String[] args) {
        RunCommand run = parse(args);
        if (run == null) {
            return null;
        }
        try {
            return run.call();
        } catch (Fallback e) {
            return null;
        } catch (Exception e) {
            return KanukiCli.failure(e, err());
        }
    }

    /**
     * @param args the whole command line
     * @return the command it describes, or null when it is not a plain {@code run} command line
     */
    static RunCommand parse(String[] args) {
        if (args.length < 3 || !args[0].equals("run")) {
            return null;
        }
        RunCommand run = new RunCommand();
        Set<String> seen = new HashSet<>();
        boolean debug = false;
        int i = 1;
        for (; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("-") || arg.equals("-")) {
                break; // NAME
            }
            String option = arg;
            String value = null;
            int equals = arg.indexOf('=');
            if (arg.startsWith("--") && equals > 0) {
                option = arg.substring(0, equals);
                value = arg.substring(equals + 1);
            }
            String canonical = canonicalName(option);
            if (canonical == null || !seen.add(canonical)) {
                return null;
            }
            if (takesValue(canonical)) {
                if (value == null) {
                    if (i + 1 >= args.length || args[i + 1].startsWith("-")) {
                        return null;
                    }
                    value = args[++i];
                }
                if (!setValue(run, canonical, value)) {
                    return null;
                }
            } else if (value != null) {
                return null;
            } else if (canonical.equals("--nonblock")) {
                run.noWait = true;
            } else if (canonical.equals("--shared")) {
                run.shared = true;
            } else {
                debug = true;
            }
        }
        int commandStart = i + 1 < args.length && args[i + 1].equals("--") ? i + 2 : i + 1;
        if (commandStart >= args.length || args[i].startsWith("@")) {
            return null; // no NAME or no command; or an @file, which picocli reports
        }
        run.name = args[i];
        run.command = new ArrayList<>(Arrays.asList(args).subList(i + 1, args.length));
        if (debug) {
            KanukiCli.enableDebug();
        }
        return run;
    }

    private static String canonicalName(String option) {
        return switch (option) {
            case "-b", "--backend" -> "--backend";
            case "-w", "--wait" -> "--wait";
            case "-n", "--nonblock" -> "--nonblock";
            case "-s", "--shared" -> "--shared";
            case "-E", "--conflict-exit-code" -> "--conflict-exit-code";
            case "--debug" -> "--debug";
            case "--lease", "--kill-after", "--on-lost", "--max-time" -> option;
            default -> null;
        };
    }

    private static boolean takesValue(String canonical) {
        return List.of("--backend", "--wait", "--conflict-exit-code", "--lease", "--kill-after", "--on-lost",
                "--max-time").contains(canonical);
    }

    private static boolean setValue(RunCommand run, String canonical, String value) {
        switch (canonical) {
            case "--backend" -> run.backend = value;
            case "--wait", "--lease", "--kill-after", "--max-time" -> {
                try {
                    java.time.Duration d = canonical.equals("--wait") && value.equals("forever")
                            ? RunCommand.FOREVER : Durations.parse(value);
                    switch (canonical) {
                        case "--wait" -> run.wait = d;
                        case "--lease" -> run.lease = d;
                        case "--max-time" -> run.maxTime = d;
                        default -> run.killAfter = d;
                    }
                } catch (IllegalArgumentException e) {
                    return false;
                }
            }
            case "--on-lost" -> {
                switch (value) {
                    case "term" -> run.onLost = LockLossGuard.OnLost.TERM;
                    case "kill" -> run.onLost = LockLossGuard.OnLost.KILL;
                    case "ignore" -> run.onLost = LockLossGuard.OnLost.IGNORE;
                    default -> {
                        return false; // picocli reports it
                    }
                }
            }
            default -> {
                if (!value.matches("[0-9]{1,3}")) {
                    return false;
                }
                run.conflictExitCode = Integer.parseInt(value);
            }
        }
        return true;
    }
}
