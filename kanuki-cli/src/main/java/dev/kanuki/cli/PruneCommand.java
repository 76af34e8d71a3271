package dev.kanuki.cli;

import dev.kanuki.LockProvider;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code kanuki prune}: removes what free locks left behind in the backend (the files of holders
 * that crashed), with the backend's safe protocol ({@link LockProvider#prune}): a lock that is
 * held, or taken while prune runs, is never touched, so it may run while others lock and unlock.
 */
@Command(name = "prune",
        mixinStandardHelpOptions = true,
        description = {
            "Remove the files that locks nobody holds left behind: a crashed holder's lock file (os), "
                    + "a stale entry whose holder is gone or whose lease ran out (mkdir, symlink, rename, create), "
                    + "a queue with no live contender, a breaker or temporary file a dead process left; on "
                    + "PostgreSQL and MySQL/MariaDB, the rows of free locks whose last fencing token the server clock "
                    + "passed by the fenceMargin option (1h). Locks "
                    + "that are held, or taken meanwhile, are never touched; files kanuki did not make are left alone.",
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:pruned (or, with --dry-run, listed) whatever there was, possibly nothing",
            "2:usage error: bad option or backend URI",
            "3:the backend has nothing to prune (neither file: nor a SQL server; the message says what it keeps and why), "
                    + "or the backend failed",
            "70:internal error: a bug in kanuki (--debug prints its stack trace)",
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  kanuki prune -b file:/var/lock/app --dry-run",
            "  kanuki prune -b 'file:/var/lock/app?strategy=mkdir' --json",
        })
final class PruneCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = {"-b", "--backend"}, paramLabel = "URI",
            description = "The lock backend (default: ${DEFAULT-VALUE}).")
    String backend = LockProvider.DEFAULT_URI;

    @Option(names = "--dry-run", description = "Only list what would be removed.")
    boolean dryRun;

    @Option(names = "--json", description = "Print one JSON object: backend, dryRun, count and removed "
            + "(the paths removed, or that would be).")
    boolean json;

    @Override
    public Integer call() {
        List<String> removed;
        String uri;
        Optional<Path> missing = LocalDirectory.missing(backend);
        if (missing.isPresent()) {
            // Opening the backend would create the directory, only to find it empty.
            KanukiCli.printError(spec.commandLine(), "no such directory " + Display.safe(missing.get().toString())
                    + ": nothing to prune");
            removed = List.of();
            uri = backend;
        } else {
            try (LockProvider provider = LockProvider.open(backend)) {
                uri = provider.uri();
                try {
                    removed = provider.prune(dryRun);
                } catch (UnsupportedOperationException e) {
                    KanukiCli.printError(spec.commandLine(), uri + ": " + KanukiCli.oneLine(e.getMessage()));
                    return ExitCodes.BACKEND;
                }
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            out.println(new Json().field("backend", uri).field("dryRun", dryRun).field("count", removed.size())
                    .field("removed", removed));
        } else {
            for (String path : removed) {
                out.println((dryRun ? "would remove " : "removed ") + Display.safe(path));
            }
            // file: removes files; the SQL servers remove the rows of free locks
            String unit = uri.startsWith("file:") ? "file" : "record";
            out.println((dryRun ? "would remove " : "removed ") + removed.size() + " " + unit
                    + (removed.size() == 1 ? "" : "s") + " left by free locks in " + Display.safe(uri));
        }
        out.flush();
        return ExitCodes.OK;
    }
}
