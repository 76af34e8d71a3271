package dev.kanuki.cli;

import dev.kanuki.LockProvider;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code kanuki demo board}: the bulletin board that loses posts without a lock, as a web page.
 * Jetty is loaded only when this command runs ({@code dev.kanuki.cli.board.BoardServer}): no other
 * command, and not {@code run}'s start-up, pays for it.
 */
@Command(name = "board",
        mixinStandardHelpOptions = true,
        description = {
            "Serve a bulletin board on http://127.0.0.1:PORT/: a page listing the posts and a form to add one.",
            "Posts live in the flat file FILE, updated under a lock (read, append, write back); a hidden one-time "
                    + "token in the form makes a double click one post. With --lock none the board reads and "
                    + "writes back without a lock, as the original CGI script did, and concurrent posts are lost: "
                    + "the page shows how many were submitted and how many were kept. Several boards (processes, "
                    + "on one machine or, with a shared -b backend and file, several) may serve one FILE.",
        },
        footerHeading = "%nExamples:%n",
        footer = {
            "  kanuki demo board --port 8080 --data /tmp/board.txt",
            "  kanuki demo board --port 0 --lock none      # prints the URL; posts sent at once get lost",
            "  kanuki demo board --port 0 --when-busy park # no post waits for the lock",
        },
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "130:stopped by Ctrl-C (SIGINT); the board runs until stopped",
            "143:stopped by SIGTERM",
            "2:usage error: bad option or backend URI",
            "3:the port is taken, the file cannot be written, or the backend failed",
        })
final class BoardCommand implements Callable<Integer> {
    /** How the board guards its file. */
    enum LockMode { kanuki, none }

    /** What a post does when the lock is busy. */
    enum WhenBusy { wait, park }

    @Option(names = "--port", paramLabel = "PORT", defaultValue = "8080",
            description = "The port on 127.0.0.1 (default: ${DEFAULT-VALUE}); 0 picks a free one. The URL is "
                    + "printed on standard output: kanuki board: http://127.0.0.1:PORT/")
    int port;

    @Option(names = {"-b", "--backend"}, paramLabel = "URI",
            description = "The lock backend (default: ${DEFAULT-VALUE}).")
    String backend = LockProvider.DEFAULT_URI;

    @Option(names = "--lock", paramLabel = "kanuki|none", defaultValue = "kanuki",
            description = "kanuki (default): every update of FILE under the lock; none: read, pause 50ms, "
                    + "write back, without a lock (posts get lost).")
    LockMode lock;

    @Option(names = "--when-busy", paramLabel = "wait|park", defaultValue = "wait",
            description = "wait (default): a post waits for the lock; park: a post that finds the lock busy is "
                    + "parked in a spool (FILE.spool, or the backend's own) and answered at once, and the "
                    + "lock's holder applies it before it lets go: no post waits, none is lost.")
    WhenBusy whenBusy;

    @Option(names = "--data", paramLabel = "FILE", defaultValue = "board.txt",
            description = "The posts, one a line (default: ${DEFAULT-VALUE}); submissions are logged in FILE.submitted.")
    Path data;

    @Override
    public Integer call() throws Exception {
        if (port < 0 || port > 65535) {
            throw new IllegalArgumentException("--port " + port + ": expected 0 to 65535");
        }
        if (lock == LockMode.none && whenBusy == WhenBusy.park) {
            throw new IllegalArgumentException("--when-busy park needs the lock: it cannot be used with --lock none");
        }
        return dev.kanuki.cli.board.BoardServer.serve(port, lock == LockMode.none ? null : backend, data,
                whenBusy == WhenBusy.park, System.out);
    }
}
