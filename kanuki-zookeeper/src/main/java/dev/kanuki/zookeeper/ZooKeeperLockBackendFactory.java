package dev.kanuki.zookeeper;

import dev.kanuki.LockBackendException;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockBackendFactory;
import dev.kanuki.spi.LockUri;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Makes the ZooKeeper backend for {@code zookeeper://host[:port][,host2[:port]...][/prefix]}
 * (port 2181 by default; nodes under {@code /prefix}, default {@code /kanuki}). Options:
 * {@code timeout} (each request's deadline, and how long opening waits for a connection; default
 * 5s), {@code session} (the ZooKeeper session timeout: how long after its holder dies or is cut
 * off a lock frees; default 10s, and the server clamps it to its own bounds, by default 2 to 20
 * ticks) and the engine's {@code poll} and {@code waitThreads}. See {@link ZooKeeperLockBackend}.
 */
public final class ZooKeeperLockBackendFactory implements LockBackendFactory {
    private static final Set<String> OPTIONS = Set.of("timeout", "session");
    private static final int DEFAULT_PORT = 2181;

    /** Used by {@link java.util.ServiceLoader}. */
    public ZooKeeperLockBackendFactory() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("zookeeper");
    }

    @Override
    public LockBackend create(LockUri uri) {
        uri.rejectUnknownOptions(OPTIONS);
        Duration timeout = uri.durationParam("timeout", Duration.ofSeconds(5));
        Duration session = uri.durationParam("session", Duration.ofSeconds(10));
        List<LockUri.Server> servers = uri.servers(DEFAULT_PORT);
        if (uri.user().isPresent()) {
            throw new IllegalArgumentException("backend URI '" + uri.redacted() + "': ZooKeeper authentication is not"
                    + " supported yet; write zookeeper://host:2181 without a user");
        }
        String prefix = prefix(uri);
        String connect = servers.stream().map(LockUri.Server::toString).collect(Collectors.joining(","));
        String scope = "zookeeper://" + connect + prefix;
        try {
            return new ZooKeeperLockBackend(connect, prefix, scope, timeout, session);
        } catch (RuntimeException e) {
            if (e instanceof LockBackendException) {
                throw e;
            }
            throw new LockBackendException("cannot connect to ZooKeeper at " + scope + ": " + e.getMessage(),
                    "check that ZooKeeper runs there and accepts client connections", e);
        }
    }

    private static String prefix(LockUri uri) {
        String path = uri.path();
        while (path.endsWith("/")) {
            path = path.substring(0, path.length() - 1);
        }
        if (path.isEmpty()) {
            return "/kanuki";
        }
        for (String part : path.substring(1).split("/", -1)) {
            if (part.isEmpty() || part.equals(".") || part.equals("..") || part.contains("\u0000")
                    || (part.equals("zookeeper") && path.startsWith("/zookeeper"))) {
                throw new IllegalArgumentException("backend URI '" + uri.redacted() + "' has a bad node prefix '" + path
                        + "'; write zookeeper://host:2181/myapp/locks");
            }
        }
        return path;
    }
}
