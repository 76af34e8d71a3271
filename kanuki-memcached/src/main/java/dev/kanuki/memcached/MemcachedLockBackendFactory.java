package dev.kanuki.memcached;

import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockBackendFactory;
import dev.kanuki.spi.LockUri;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Makes the memcached backend for {@code memcached://host[:port][,host[:port]…]} (port 11211 by
 * default). Options: {@code timeout} (each command's deadline, connecting included; default 5s),
 * {@code fenceMargin} (how long a name's fencing counter is kept after the clock passed its last
 * number, default 1h) and the engine's {@code lease}, {@code poll} and {@code waitThreads}.
 * Connections are opened on first use, so a server that is down makes only the names that live on it fail. See
 * {@link MemcachedLockBackend}.
 */
public final class MemcachedLockBackendFactory implements LockBackendFactory {
    /** memcached's standard port. */
    public static final int DEFAULT_PORT = 11211;
    private static final Set<String> OPTIONS = Set.of("timeout", "fenceMargin");

    /** Used by {@link java.util.ServiceLoader}. */
    public MemcachedLockBackendFactory() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("memcached");
    }

    @Override
    public LockBackend create(LockUri uri) {
        uri.rejectUnknownOptions(OPTIONS);
        Duration timeout = uri.durationParam("timeout", Duration.ofSeconds(5));
        if (timeout.isZero() || timeout.isNegative()) {
            throw new IllegalArgumentException("option timeout in backend URI '" + uri.redacted() + "' must be positive");
        }
        Duration lease = uri.durationParam("lease", Duration.ofSeconds(30)); // the engine's option, checked here
        if (MemcachedLockBackend.ttlSeconds(lease) >= MemcachedLockBackend.MAX_TTL_SECONDS) {
            throw new IllegalArgumentException("lease=" + uri.params().get("lease") + " in backend URI '" + uri.redacted()
                    + "' is too long: memcached keeps an item at most 30 days; use a lease of at most 696h (29 days)");
        }
        List<MemcachedNode> nodes = new ArrayList<>();
        for (HostPort server : servers(uri)) {
            nodes.add(new MemcachedNode(server.host(), server.port(), timeout));
        }
        Duration fenceMargin = uri.durationParam("fenceMargin", MemcachedLockBackend.DEFAULT_FENCE_MARGIN);
        if (fenceMargin.isNegative()) {
            throw new IllegalArgumentException("option fenceMargin in backend URI '" + uri.redacted()
                    + "' must not be negative");
        }
        return new MemcachedLockBackend(nodes, timeout, fenceMargin);
    }

    /** A server as written in the URI. */
    record HostPort(String host, int port) {
    }

    /**
     * @param uri {@code memcached://host[:port][,host[:port]…]}
     * @return the servers, each once, in the order written
     * @throws IllegalArgumentException when a server is malformed or the URI has a path or user
     */
    static List<HostPort> servers(LockUri uri) {
        if (!uri.body().startsWith("//") || uri.authority().isEmpty()) {
            throw new IllegalArgumentException("backend URI '" + uri.redacted()
                    + "' names no server; write memcached://host:11211[,host2:11211...]");
        }
        if (!uri.path().isEmpty() && !uri.path().equals("/")) {
            throw new IllegalArgumentException("backend URI '" + uri.redacted() + "' has a path ('" + uri.path()
                    + "'); memcached has no databases: write memcached://host:11211");
        }
        if (uri.authority().contains("@")) {
            throw new IllegalArgumentException("backend URI '" + uri.redacted()
                    + "' has a user; memcached's meta protocol has no authentication here");
        }
        Set<HostPort> servers = new LinkedHashSet<>();
        for (String part : uri.authority().split(",", -1)) {
            HostPort server = hostPort(part.strip(), uri);
            if (!servers.add(server)) {
                throw new IllegalArgumentException("backend URI '" + uri.redacted() + "' names " + part + " twice");
            }
        }
        return List.copyOf(servers);
    }

    private static HostPort hostPort(String text, LockUri uri) {
        String host = text;
        String port = null;
        if (text.startsWith("[")) {
            int close = text.indexOf(']');
            if (close < 0) {
                throw new IllegalArgumentException("backend URI '" + uri.redacted() + "': unclosed [ in '" + text + "'");
            }
            host = text.substring(1, close);
            String rest = text.substring(close + 1);
            if (!rest.isEmpty()) {
                if (!rest.startsWith(":")) {
                    throw new IllegalArgumentException("backend URI '" + uri.redacted() + "': bad server '" + text + "'");
                }
                port = rest.substring(1);
            }
        } else {
            int colon = text.lastIndexOf(':');
            if (colon >= 0) {
                host = text.substring(0, colon);
                port = text.substring(colon + 1);
            }
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("backend URI '" + uri.redacted() + "': a server without a host in '"
                    + uri.authority() + "'; write host:11211, separated by commas");
        }
        int number = DEFAULT_PORT;
        if (port != null) {
            try {
                number = Integer.parseInt(port);
            } catch (NumberFormatException e) {
                number = -1;
            }
            if (number < 1 || number > 65535) {
                throw new IllegalArgumentException("backend URI '" + uri.redacted() + "': bad port '" + port + "' in '"
                        + text + "'");
            }
        }
        return new HostPort(host, number);
    }
}
