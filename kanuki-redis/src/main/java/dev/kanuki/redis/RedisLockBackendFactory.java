package dev.kanuki.redis;

import dev.kanuki.LockBackendException;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockBackendFactory;
import dev.kanuki.spi.LockUri;
import io.lettuce.core.RedisURI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Set;

/**
 * Makes the Redis backend for {@code redis://[user:password@]host[:port][/db]},
 * {@code rediss://…} (TLS) and
 * {@code redis-sentinel://[user:password@]host[:port][,host[:port]…]/MASTERNAME[/db]} (the
 * primary Redis Sentinel names {@code MASTERNAME}, found again after a failover; the credentials
 * are the data servers', the sentinels are asked without; sentinel port 26379 by default). Options: {@code timeout} (each command's deadline, default 5s),
 * {@code tlsCa} (a PEM file of certificates to trust for {@code rediss}, instead of the JVM's),
 * {@code fenceMargin} (how long a name's fence counter is kept after the server clock passed its
 * last token, default 1h) and
 * the engine's {@code lease}, {@code poll} and {@code waitThreads}. See {@link RedisLockBackend}.
 */
public final class RedisLockBackendFactory implements LockBackendFactory {
    /**
     * How long a name's fence counter is kept after the server clock passed its last token: the
     * clock step back that fencing tokens survive once the counter expired.
     */
    static final Duration DEFAULT_FENCE_MARGIN = Duration.ofHours(1);
    private static final Set<String> OPTIONS = Set.of("timeout", "tlsCa", "fenceMargin");

    /** Used by {@link java.util.ServiceLoader}. */
    public RedisLockBackendFactory() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss", "redis-sentinel");
    }

    @Override
    public LockBackend create(LockUri uri) {
        uri.rejectUnknownOptions(OPTIONS);
        Duration timeout = uri.durationParam("timeout", Duration.ofSeconds(5));
        Duration fenceMargin = uri.durationParam("fenceMargin", DEFAULT_FENCE_MARGIN);
        if (fenceMargin.isNegative()) {
            throw new IllegalArgumentException("backend URI '" + uri.redacted() + "': fenceMargin must not be negative");
        }
        boolean sentinel = uri.scheme().equals("redis-sentinel");
        if (sentinel && uri.param("tlsCa").isPresent()) {
            throw new IllegalArgumentException("backend URI '" + uri.redacted() + "': tlsCa is for rediss:// only");
        }
        RedisURI redisUri = sentinel ? sentinelUri(uri, timeout) : redisUri(uri, timeout);
        String scope = sentinel
                ? uri.scheme() + "://" + redisUri.getSentinels().stream().map(s -> s.getHost() + ":" + s.getPort())
                        .collect(java.util.stream.Collectors.joining(",")) + "/" + redisUri.getSentinelMasterId()
                        + "/" + redisUri.getDatabase()
                : uri.scheme() + "://" + redisUri.getHost() + ":" + redisUri.getPort() + "/" + redisUri.getDatabase();
        try {
            return new RedisLockBackend(redisUri, scope, timeout, uri.param("tlsCa").map(java.io.File::new).orElse(null),
                    fenceMargin);
        } catch (RuntimeException e) {
            if (e instanceof LockBackendException) {
                throw e;
            }
            LockBackendException named = RedisErrors.recognised(scope, redisUri.getHost(), e);
            if (named != null) {
                throw named;
            }
            throw new LockBackendException("cannot connect to Redis at " + scope + ": " + e.getMessage(),
                    "check that redis-server runs there and accepts connections", e);
        }
    }

    static RedisURI redisUri(LockUri uri, Duration timeout) {
        String[] auth = splitCredentials(uri);
        HostAndPort at = hostAndPort(uri, auth[2], 6379);
        String path = uri.path();
        int db = database(uri, path.isEmpty() || path.equals("/") ? "" : path.substring(1));
        RedisURI.Builder b = RedisURI.builder().withHost(at.host()).withPort(at.port()).withDatabase(db)
                .withSsl(uri.scheme().equals("rediss"));
        return finish(b, auth, timeout);
    }

    /** {@code redis-sentinel://[user:password@]host[:port][,host[:port]…]/MASTERNAME[/db]} */
    static RedisURI sentinelUri(LockUri uri, Duration timeout) {
        String[] auth = splitCredentials(uri);
        String[] path = uri.path().isEmpty() ? new String[0] : uri.path().substring(1).split("/", -1);
        if (path.length < 1 || path.length > 2 || path[0].isEmpty()) {
            throw new IllegalArgumentException("backend URI '" + uri.redacted() + "' names no primary; write "
                    + "redis-sentinel://sentinel1:26379[,sentinel2:26379]/MASTERNAME[/db]");
        }
        RedisURI.Builder b = null;
        for (String part : auth[2].split(",", -1)) {
            HostAndPort at = hostAndPort(uri, part, 26379);
            b = b == null ? RedisURI.Builder.sentinel(at.host(), at.port(), decode(path[0]))
                    : b.withSentinel(at.host(), at.port());
        }
        b.withDatabase(database(uri, path.length == 2 ? path[1] : ""));
        return finish(b, auth, timeout);
    }

    /** {@return {user or null, password or null, the authority without them}} */
    private static String[] splitCredentials(LockUri uri) {
        if (!uri.body().startsWith("//") || uri.authority().isEmpty()) {
            throw new IllegalArgumentException("backend URI '" + uri.redacted() + "' has no host; write "
                    + uri.scheme() + (uri.scheme().equals("redis-sentinel") ? "://host:26379/MASTERNAME"
                    : "://host:6379[/db]"));
        }
        String authority = uri.authority();
        int at = authority.lastIndexOf('@');
        if (at < 0) {
            return new String[] {null, null, authority};
        }
        String info = authority.substring(0, at);
        int colon = info.indexOf(':');
        return new String[] {decode(colon < 0 ? info : info.substring(0, colon)),
                colon < 0 ? null : decode(info.substring(colon + 1)), authority.substring(at + 1)};
    }

    private record HostAndPort(String host, int port) {
    }

    private static HostAndPort hostAndPort(LockUri uri, String authority, int defaultPort) {
        String host = authority;
        int port = defaultPort;
        int portColon = authority.startsWith("[") ? authority.indexOf(':', authority.indexOf(']'))
                : authority.lastIndexOf(':');
        if (portColon >= 0) {
            host = authority.substring(0, portColon);
            try {
                port = Integer.parseInt(authority.substring(portColon + 1));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("backend URI '" + uri.redacted() + "' has a bad port");
            }
        }
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (host.isEmpty()) {
            throw new IllegalArgumentException("backend URI '" + uri.redacted() + "' has no host");
        }
        return new HostAndPort(host, port);
    }

    private static int database(LockUri uri, String text) {
        if (text.isEmpty()) {
            return 0;
        }
        try {
            int db = Integer.parseInt(text);
            if (db < 0) {
                throw new NumberFormatException();
            }
            return db;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("backend URI '" + uri.redacted()
                    + "' names database '" + text + "': write a number, e.g. /0");
        }
    }

    /** Adds the credentials (of the data servers), the timeout and the client name. */
    private static RedisURI finish(RedisURI.Builder b, String[] auth, Duration timeout) {
        String user = auth[0];
        String password = auth[1];
        if (password != null && user != null && !user.isEmpty()) {
            b.withAuthentication(user, password.toCharArray());
        } else if (password != null) {
            b.withPassword(password.toCharArray());
        } else if (user != null && !user.isEmpty()) {
            // redis://password@host, as redis-cli -u reads it
            b.withPassword(user.toCharArray());
        }
        b.withTimeout(timeout).withClientName("kanuki");
        return b.build();
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
}
