package dev.kanuki.cli;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockException;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * The {@code kanuki} command. Every user error (bad option, duration, URI or lock name) ends
 * with one line {@code kanuki: <message>} on standard error and exit code 2; backend failures
 * with one line and exit code 3. No stack trace is printed unless {@code --debug} is given.
 */
@Command(name = "kanuki",
        mixinStandardHelpOptions = true,
        versionProvider = KanukiCli.Version.class,
        description = "Locks between processes and servers: run a command under a lock, "
                + "inspect and break locks, torture-test a backend.",
        subcommands = {RunCommand.class, StatusCommand.class, BreakCommand.class, PruneCommand.class, TortureCommand.class,
            DemoCommand.class, CompletionCommand.class},
        footerHeading = "%n",
        footer = {
            "Backends (-b URI; the default is file: in a per-user directory):",
            "  file:[DIR][?strategy=os|mkdir|symlink|rename|create|queue][&lease=10s]",
            "                  lock files in DIR: kernel locks (os), or files with a lease;",
            "                  &shared=group: trust a team DIR that its group may write",
            "  sqlite:DIR      one small SQLite database per lock name, in DIR",
            "  postgresql://HOST[:PORT]/DB?user=USER[&passwordFile=FILE]",
            "                  PostgreSQL advisory locks",
            "  mysql://HOST[:PORT]/DB?user=USER[&passwordFile=FILE]  (or mariadb://...)",
            "                  GET_LOCK on MySQL or MariaDB",
            "  redis://[USER:PASSWORD@]HOST[:PORT][/DB][?timeout=5s]  (or rediss:// for TLS)",
            "                  Redis keys with a lease, woken by the release's PUBLISH",
            "  redis-sentinel://[USER:PASSWORD@]HOST[:PORT][,HOST2[:PORT]...]/MASTER[/DB]",
            "                  the same on the primary Redis Sentinel names MASTER (sentinel port 26379)",
            "  memcached://HOST[:PORT][,HOST[:PORT]...][?timeout=5s]",
            "                  memcached 1.6 items with a lease, spread over the servers",
            "  etcd://HOST[:PORT][,HOST2[:PORT]...][/PREFIX][?timeout=5s]",
            "                  etcd keys on a lease, woken by a watch",
            "  zookeeper://HOST[:PORT][,HOST2[:PORT]...][/PREFIX][?timeout=5s&session=10s]",
            "                  ZooKeeper ephemeral nodes on the session, woken by a watch",
            "  mem:            in this process only (for tests)",
            "Durations: 500ms, 5s, 2m, 1h or a number of seconds. Names: any text up to 1024 characters without "
                    + "NUL, read as UTF-8; canonically equivalent spellings (NFC/NFD) are one lock.",
            "",
            "Examples:",
            "  kanuki run -n nightly -- ./backup.sh",
            "  kanuki status -b 'file:/var/lock/app?strategy=mkdir'",
            "  kanuki break -b 'file:/var/lock/app?strategy=mkdir' nightly",
            "  kanuki demo board --port 0 --lock none",
            "  source <(kanuki completion bash)",
        })
public final class KanukiCli implements Callable<Integer> {
    private static volatile boolean debug;

    @Spec
    CommandSpec spec;

    /**
     * Shows stack traces and the library's debug log; inherited by every subcommand.
     *
     * @param on whether {@code --debug} was given
     */
    @Option(names = "--debug", scope = ScopeType.INHERIT,
            description = "On an error, also print the Java stack trace; log the library's debug messages.")
    void setDebug(boolean on) {
        if (on) {
            enableDebug();
        }
    }

    /**
     * Runs the command and exits the JVM with its exit code.
     *
     * @param args the command line
     */
    public static void main(String[] args) {
        StartupWarmup.startFor(args);
        withoutClassPathScans();
        SharingArchiveCheck.run();
        int code = mainCode(args);
        System.out.flush();
        System.err.flush();
        System.exit(code);
    }

    /**
     * Names the logging binding and the built-in backends' factories, so that neither SLF4J nor
     * the backend registry reads every jar on the class path to find them: milliseconds of every
     * start. A property the user set is left alone.
     */
    private static void withoutClassPathScans() {
        Map<String, String> properties = new LinkedHashMap<>();
        properties.put("slf4j.provider", CliLogging.class.getName());
        properties.put("slf4j.internal.verbosity", "WARN"); // else SLF4J says which provider it took
        String prefix = "kanuki.backend."; // kanuki.backend.SCHEME names a scheme's factory (see LockProvider.open)
        properties.put(prefix + "file", "dev.kanuki.file.FileLockBackendFactory");
        properties.put(prefix + "mem", "dev.kanuki.mem.MemLockBackendFactory");
        properties.put(prefix + "sqlite", "dev.kanuki.sqlite.SqliteLockBackendFactory");
        for (String scheme : List.of("postgresql", "mysql", "mariadb")) {
            properties.put(prefix + scheme, "dev.kanuki.jdbc.JdbcLockBackendFactory");
        }
        for (String scheme : List.of("redis", "rediss", "redis-sentinel")) {
            properties.put(prefix + scheme, "dev.kanuki.redis.RedisLockBackendFactory");
        }
        properties.put(prefix + "memcached", "dev.kanuki.memcached.MemcachedLockBackendFactory");
        properties.put(prefix + "etcd", "dev.kanuki.etcd.EtcdLockBackendFactory");
        properties.put(prefix + "zookeeper", "dev.kanuki.zookeeper.ZooKeeperLockBackendFactory");
        // A loop, not a lambda: the first lambda sets up the invokedynamic machinery, which
        // StartupWarmup does on another thread meanwhile.
        for (Map.Entry<String, String> property : properties.entrySet()) {
            if (System.getProperty(property.getKey()) == null) {
                System.setProperty(property.getKey(), property.getValue());
            }
        }
        // Client libraries that log through java.util.logging (gRPC, under etcd) go through SLF4J
        // like the others: quiet unless --debug. A property only: java.util.logging reads it when
        // a library first logs, so a command that never does loads none of it.
        if (System.getProperty("java.util.logging.config.class") == null
                && System.getProperty("java.util.logging.config.file") == null) {
            System.setProperty("java.util.logging.config.class", JavaLoggingToSlf4j.class.getName());
        }
    }

    /** @return the exit code of the command line the JVM was started with, read as UTF-8 */
    private static int mainCode(String[] jvmArgs) {
        String[] args;
        try {
            args = CommandLineText.decode(jvmArgs);
        } catch (IllegalArgumentException e) {
            PrintWriter err = QuickRun.err();
            err.println("kanuki: " + e.getMessage());
            err.flush();
            return ExitCodes.USAGE;
        }
        Integer quick = QuickRun.execute(args);
        return quick != null ? quick : execute(args);
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

    /** Shows stack traces and the library's debug messages from now on. */
    static void enableDebug() {
        debug = true;
        CliLogging.enableDebug();
    }

    /** @return the configured picocli command line: exit codes and one-line errors */
    static CommandLine commandLine() {
        CommandLine cli = new CommandLine(new KanukiCli());
        // Arguments reach CMD and lock names untouched: '@file' is not read as a file of arguments.
        cli.setExpandAtFiles(false);
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
        return missing(spec, "command; one of: run, status, break, torture, demo, completion");
    }

    /**
     * A command that needs a subcommand was given none: says so and shows its usage on standard error.
     *
     * @param spec the command
     * @param what what is missing, e.g. {@code "demo; one of: board"}
     * @return the usage exit code
     */
    static int missing(CommandSpec spec, String what) {
        PrintWriter err = spec.commandLine().getErr();
        err.println("kanuki: missing " + what);
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
        return failure(e, cmd.getErr());
    }

    /**
     * Reports an exception from a command as one line, plus its stack trace under {@code --debug}.
     *
     * @param e what the command threw
     * @param err where to report it
     * @return the exit code: 2 for usage errors, 3 for backend failures, 70 for bugs
     */
    static int failure(Exception e, PrintWriter err) {
        int code;
        String message;
        if (e instanceof IllegalArgumentException || e instanceof UnsupportedOperationException) {
            code = ExitCodes.USAGE;
            message = oneLine(e.getMessage());
        } else if (e instanceof LockBackendException || e instanceof LockException
                || e instanceof IOException || e instanceof UncheckedIOException) {
            code = ExitCodes.BACKEND;
            message = oneLine(e.getMessage());
        } else {
            code = ExitCodes.INTERNAL;
            message = "internal error: " + oneLine(String.valueOf(e))
                    + (debug ? "" : " (a bug in kanuki; run again with --debug for the stack trace)");
        }
        err.println("kanuki: " + Display.escapeControls(message));
        if (debug) {
            e.printStackTrace(err);
        }
        err.flush();
        return code;
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
