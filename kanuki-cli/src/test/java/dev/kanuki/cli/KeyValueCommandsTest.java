package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.testkit.EtcdServer;
import dev.kanuki.testkit.MemcachedServer;
import dev.kanuki.testkit.RedisServer;
import dev.kanuki.testkit.ZooKeeperServer;
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
 * {@code kanuki run}, {@code status}, {@code break} and {@code torture} on the key-value servers
 * ({@code redis://}, {@code etcd://}, {@code memcached://}, {@code zookeeper://}), against real servers
 * from kanuki-testkit, with real holder and worker processes.
 */
@Timeout(180)
@Tag("servers")
class KeyValueCommandsTest {
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

    private static String uri(String server) {
        return switch (server) {
            case "redis" -> RedisServer.shared().kanukiUri();
            case "etcd" -> EtcdServer.shared().kanukiUri();
            case "memcached" -> MemcachedServer.shared().kanukiUri();
            case "zookeeper" -> ZooKeeperServer.shared().kanukiUri();
            default -> throw new IllegalArgumentException(server);
        };
    }

    private long token(String uri, String name) throws IOException, InterruptedException {
        Cli.Result r = Cli.run(dir, "run", "-b", uri, name, "--", "sh", "-c", "echo token=$KANUKI_FENCING_TOKEN");
        assertEquals(0, r.exitCode(), r.err());
        Matcher m = TOKEN.matcher(r.out());
        assertTrue(m.find(), "no token in: " + r.out());
        return Long.parseLong(m.group(1));
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "etcd", "memcached", "zookeeper"})
    void runStatusAndBreak(String server) throws Exception {
        String uri = uri(server);
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
        assertEquals(ExitCodes.BUSY, refused.exitCode(), "a live lock is broken only with --force: " + refused.err());
        Cli.Result broken = Cli.run(dir, "break", "--force", "-b", uri, "nightly");
        assertEquals(0, broken.exitCode(), broken.err());

        Cli.Result next = Cli.run(dir, "run", "-w", "10s", "-b", uri, "nightly", "--", "sh", "-c",
                "echo token=$KANUKI_FENCING_TOKEN");
        assertEquals(0, next.exitCode(), next.err());
        Matcher m = TOKEN.matcher(next.out());
        assertTrue(m.find() && Long.parseLong(m.group(1)) > first + 1, next.out());
    }

    @ParameterizedTest
    @ValueSource(strings = {"redis", "etcd", "memcached", "zookeeper"})
    void tortureAcrossProcesses(String server) throws Exception {
        Cli.Result locked = Cli.run(dir, "torture", "-b", uri(server), "--procs", "3", "--iterations", "60", "--json");
        assertEquals(0, locked.exitCode(), locked::err);
        assertTrue(locked.out().contains("\"expected\":180,\"actual\":180,"), locked::out);
        assertTrue(locked.out().contains("\"passed\":true"), locked::out);
    }
}
