package dev.kanuki.zookeeper;

import dev.kanuki.testkit.ZooKeeperServer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;

/** What a ZooKeeper server says about its clients through four-letter words. */
final class ServerWatches {
    private static final Pattern LAST_XID = Pattern.compile("lcxid=0x([0-9a-f]+)");

    private ServerWatches() {
    }

    /** @return the sessions watching each node ({@code wchp}) */
    static Map<String, List<Long>> byPath(ZooKeeperServer server) {
        Map<String, List<Long>> out = new HashMap<>();
        List<Long> current = null;
        for (String line : server.fourLetterWord("wchp").split("\n")) {
            if (line.startsWith("/")) {
                current = new ArrayList<>();
                out.put(line.trim(), current);
            } else if (line.trim().startsWith("0x") && current != null) {
                current.add(Long.parseUnsignedLong(line.trim().substring(2), 16));
            }
        }
        return out;
    }

    /**
     * Waits until each session watches some node: a waiter makes its place before it sets its
     * watch, so a place seen is not yet a watch set.
     */
    static void awaitWatching(ZooKeeperServer server, Collection<Long> sessions) {
        Awaitility.await().atMost(Duration.ofSeconds(30)).until(() -> byPath(server).values().stream()
                .flatMap(List::stream).collect(Collectors.toSet()).containsAll(sessions));
    }

    /**
     * @return the id of the last request the server received from this session ({@code lcxid} in
     *     {@code cons}); pings do not count, so it stays put while the client asks nothing
     */
    static long lastRequest(ZooKeeperServer server, long sessionId) {
        String cons = server.fourLetterWord("cons");
        for (String line : cons.split("\n")) {
            if (line.contains("sid=0x" + Long.toHexString(sessionId) + ",")) {
                Matcher m = LAST_XID.matcher(line);
                if (!m.find()) {
                    throw new AssertionError("no lcxid in " + line);
                }
                return Long.parseLong(m.group(1), 16);
            }
        }
        throw new AssertionError("no connection of session 0x" + Long.toHexString(sessionId) + " in:\n" + cons);
    }
}
