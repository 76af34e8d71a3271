package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.testkit.MariaDbServer;
import dev.kanuki.testkit.PostgresServer;
import dev.kanuki.testkit.ServerProcess;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code kanuki run}, {@code status} and {@code break} on {@code postgresql://} and
 * {@code mariadb://}, against real servers from kanuki-testkit, with real holder processes.
 */
@Timeout(180)
@Tag("servers")
class SqlCommandsTest {
    private static final Pattern TOKEN = Pattern.compile("token=(\\d+)");

    @TempDir
    Path dir;
    private final List<Holder> holders = new ArrayList<>();

    @AfterEach
    void killLeftoverHolders() throws InterruptedException {
        for (Holder holder : holders) {
            holder.kill();
        }
    }

    /** @return a URI on a fresh database of the shared server; no restart grace (it may have just started) */
    private static String uri(String product) {
        ServerProcess server = product.equals("postgresql") ? PostgresServer.shared() : MariaDbServer.shared();
        String database = server.createDatabase("cli_commands");
        return server.kanukiUri(database) + "&restartGrace=0";
    }

    private long token(String uri, String name) throws IOException, InterruptedException {
        Cli.Result r = Cli.run(dir, "run", "-b", uri, name, "--", "sh", "-c", "echo token=$KANUKI_FENCING_TOKEN");
        assertEquals(0, r.exitCode(), r.err());
        Matcher m = TOKEN.matcher(r.out());
        assertTrue(m.find(), "no token in: " + r.out());
        return Long.parseLong(m.group(1));
    }

    @ParameterizedTest
    @ValueSource(strings = {"postgresql", "mariadb"})
    void runStatusAndBreakWorkOnTheDatabaseServers(String product) throws Exception {
        String uri = uri(product);
        long first = token(uri, "nightly");
        assertTrue(token(uri, "nightly") > first, "tokens must increase from run to run");

        Holder holder = Holder.start(dir, uri, "nightly");
        holders.add(holder);
        long pid = holder.awaitHolding();

        Cli.Result status = Cli.run(dir, "status", "-b", uri, "--json", "nightly");
        assertEquals(0, status.exitCode(), status.err());
        assertTrue(status.out().contains("\"state\":\"held\""), status.out());
        assertTrue(status.out().contains("\"pid\":" + pid), "status must name the holder " + pid + ": " + status.out());

        Cli.Result listing = Cli.run(dir, "status", "-b", uri);
        assertEquals(0, listing.exitCode(), listing.err());
        assertTrue(listing.out().lines().anyMatch(l -> l.startsWith("nightly ") && l.contains("held")
                && l.contains(pid + "@")), "the listing must show the held lock and its holder:\n" + listing.out());

        Cli.Result busy = Cli.run(dir, "run", "-n", "-b", uri, "nightly", "--", "true");
        assertEquals(ExitCodes.BUSY, busy.exitCode(), busy.err());
        assertTrue(busy.err().contains("pid " + pid), "the conflict must name the holder: " + busy.err());

        Cli.Result refused = Cli.run(dir, "break", "-b", uri, "nightly");
        assertEquals(ExitCodes.BUSY, refused.exitCode(), "a live session lock is broken only with --force: " + refused.err());
        Cli.Result broken = Cli.run(dir, "break", "--force", "-b", uri, "nightly");
        assertEquals(0, broken.exitCode(), broken.err());

        // The holder's session was ended: the lock is free for the next run (which may have to
        // wait a moment for the server to finish ending the session), with a larger token.
        Cli.Result next = Cli.run(dir, "run", "-w", "10s", "-b", uri, "nightly", "--", "sh", "-c",
                "echo token=$KANUKI_FENCING_TOKEN");
        assertEquals(0, next.exitCode(), next.err());
        Matcher m = TOKEN.matcher(next.out());
        assertTrue(m.find() && Long.parseLong(m.group(1)) > first + 1, next.out());
    }
}
