package dev.kanuki.cli;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code kanuki} command. Every user error (bad option, duration, URI or lock name) ends
 * with one line {@code kanuki: <message>} on standard error and exit code 2; backend failures
 * with one line and exit code 3; stack traces are printed only for bugs.
 */
@Command(name = "kanuki",
        mixinStandardHelpOptions = true,
        versionProvider = KanukiCli.Version.class,
        description = "Locks between processes and servers: run a command under a lock, "
                + "inspect and break locks, torture-test a backend.",
        subcommands = {RunCommand.class, StatusCommand.class, BreakCommand.class, TortureCommand.class},
        footerHeading = "%n",
        footer = {
            "Backends: mem:, file:[DIR][?strategy=os|mkdir|symlink|rename|create|queue] (default: file: in a "
                    + "per-user directory, strategy os). Durations: 500ms, 5s, 2m, 1h or a number of seconds.",
            "",
            "Examples:",
            "  kanuki run -n nightly -- ./backup.sh",
            "  kanuki status -b 'file:/var/lock/app?strategy=mkdir'",
            "  kanuki break -b 'file:/var/lock/app?strategy=mkdir' nightly",
        })
public final class KanukiCli implements Callable<Integer> {

    @Spec
    CommandSpec spec;

    /**
     * Runs the command and exits the JVM with its exit code.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        int code = execute(args);
        System.out.flush();
        System.err.flush();
        System.exit(code);
    }

    /**
     * Runs the command without exiting the JVM.
     *
     * @param args the command line
     * @return the exit code
     */
    public static int execute(String... args) {
        return commandLine().execute(args);
    }

    /** @return the configured picocli command line: exit codes and one-line errors */
    static CommandLine commandLine() {
        CommandLine cli = new CommandLine(new KanukiCli());
        // `kanuki run NAME cmd -x`: everything after NAME belongs to the command, as with flock(1).
        cli.getSubcommands().get("run").setStopAtPositional(true);
        for (CommandLine command : allCommands(cli)) {
            var usage = command.getCommandSpec().usageMessage();
            if (usage.exitCodeList().isEmpty()) { // break lists its own outcomes
                usage.exitCodeListHeading("%nExit codes:%n").exitCodeList(ExitCodes.help());
            }
        }
        cli.setParameterExceptionHandler(KanukiCli::usageError);
        cli.setExecutionExceptionHandler((e, cmd, parseResult) -> failure(e, cmd));
        return cli;
    }

    private static List<CommandLine> allCommands(CommandLine root) {
        List<CommandLine> all = new ArrayList<>();
        all.add(root);
        all.addAll(root.getSubcommands().values());
        return all;
    }

    /** No subcommand: show the usage on standard error. */
    @Override
    public Integer call() {
        PrintWriter err = spec.commandLine().getErr();
        err.println("kanuki: missing command; one of: run, status, break, torture");
        spec.commandLine().usage(err);
        err.flush();
        return ExitCodes.USAGE;
    }

    private static int usageError(ParameterException e, String[] args) {
        CommandLine cmd = e.getCommandLine();
        String help = cmd.getCommandSpec().qualifiedName() + " --help";
        printError(cmd, oneLine(e.getMessage()) + " (see '" + help + "')");
        return ExitCodes.USAGE;
    }

    private static int failure(Exception e, CommandLine cmd) {
        if (e instanceof ParameterException pe) {
            return usageError(pe, new String[0]);
        }
        if (e instanceof IllegalArgumentException || e instanceof UnsupportedOperationException) {
            printError(cmd, oneLine(e.getMessage()));
            return ExitCodes.USAGE;
        }
        if (e instanceof LockBackendException || e instanceof LockException) {
            printError(cmd, oneLine(e.getMessage()));
            return ExitCodes.BACKEND;
        }
        if (e instanceof IOException || e instanceof UncheckedIOException) {
            printError(cmd, oneLine(e.getMessage()));
            return ExitCodes.BACKEND;
        }
        PrintWriter err = cmd.getErr();
        err.println("kanuki: internal error: " + e);
        e.printStackTrace(err);
        err.flush();
        return ExitCodes.INTERNAL;
    }

    /** Prints {@code kanuki: message}; control characters in it (from a name or a record) are escaped. */
    static void printError(CommandLine cmd, String message) {
        PrintWriter err = cmd.getErr();
        err.println("kanuki: " + Display.escapeControls(message));
        err.flush();
    }

    /** Folds a message onto one line, so every error is exactly one line. */
    static String oneLine(String message) {
        if (message == null || message.isBlank()) {
            return "failed (no message)";
        }
        return message.strip().replaceAll("\\s*\\R\\s*", " ");
    }

    /** The version from the build (a filtered resource), else from the jar manifest. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            return new String[] {"kanuki " + version()};
        }

        static String version() {
            try (InputStream in = KanukiCli.class.getResourceAsStream("version.properties")) {
                if (in != null) {
                    Properties p = new Properties();
                    p.load(in);
                    String v = p.getProperty("version", "");
                    if (!v.isEmpty() && !v.startsWith("${")) {
                        return v;
                    }
                }
            } catch (IOException e) {
                // fall through to the manifest
            }
            String manifest = KanukiCli.class.getPackage().getImplementationVersion();
            return manifest == null ? "unknown" : manifest;
        }
    }
}
