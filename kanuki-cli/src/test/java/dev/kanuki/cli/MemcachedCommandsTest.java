package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.testkit.MemcachedServer;
import java.io.IOException;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kanuki torture}, {@code run}, {@code status} and {@code break} on {@code memcached://},
 * against a real memcached from kanuki-testkit, with real processes.
 */
@Timeout(180)
class MemcachedCommandsTest {
    private static final Pattern TOKEN = Pattern.compile("token=(\\d+)");
    private static MemcachedServer server;

    @TempDir
    Path dir;

    @BeforeAll
    static void start() {
        server = MemcachedServer.start();
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @Test
    void tortureAcrossProcessesPasses() throws Exception {
        Cli.Result r = Cli.run(dir, "torture", "-b", server.kanukiUri(), "--procs", "3", "--iterations", "100", "--json");
        assertEquals(0, r.exitCode(), r::err);
        assertTrue(r.out().contains("\"expected\":300,\"actual\":300,"), r::out);
        assertTrue(r.out().contains("\"passed\":true"), r::out);
    }

    private long token(String uri, String name) throws IOException, InterruptedException {
        Cli.Result r = Cli.run(dir, "run", "-b", uri, name, "--", "sh", "-c", "echo token=$KANUKI_FENCING_TOKEN");
        assertEquals(0, r.exitCode(), r.err());
        Matcher m = TOKEN.matcher(r.out());
        assertTrue(m.find(), "no token in: " + r.out());
        return Long.parseLong(m.group(1));
    }

    @Test
    void runStatusAndBreak() throws Exception {
        String uri = server.kanukiUri();
        long first = token(uri, "nightly");
        assertTrue(token(uri, "nightly") > first, "tokens must increase from run to run");

        Holder holder = Holder.start(dir, uri, "nightly");
        try {
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
            assertEquals(ExitCodes.BUSY, refused.exitCode(), "a live lease is broken only with --force: " + refused.err());
            Cli.Result broken = Cli.run(dir, "break", "--force", "-b", uri, "nightly");
            assertEquals(0, broken.exitCode(), broken.err());
            assertTrue(token(uri, "nightly") > first + 1, "the next run after the break gets a higher token");
        } finally {
            holder.kill();
        }
    }
}
