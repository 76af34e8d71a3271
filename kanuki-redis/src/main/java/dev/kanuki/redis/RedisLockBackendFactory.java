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
 * Makes the Redis backend for {@code redis://[user:password@]host[:port][/db]} and
 * {@code rediss://…} (TLS). Options: {@code timeout} (each command's deadline, default 5s),
 * {@code tlsCa} (a PEM file of certificates to trust for {@code rediss}, instead of the JVM's) and
 * the engine's {@code lease}, {@code poll} and {@code waitThreads}. See {@link RedisLockBackend}.
 */
public final class RedisLockBackendFactory implements LockBackendFactory {
    private static final Set<String> OPTIONS = Set.of("timeout", "tlsCa");

    /** Used by {@link java.util.ServiceLoader}. */
    public RedisLockBackendFactory() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("redis", "rediss");
    }

    @Override
    public LockBackend create(LockUri uri) {
        uri.rejectUnknownOptions(OPTIONS);
        Duration timeout = uri.durationParam("timeout", Duration.ofSeconds(5));
        RedisURI redisUri = redisUri(uri, timeout);
        String scope = uri.scheme() + "://" + redisUri.getHost() + ":" + redisUri.getPort() + "/" + redisUri.getDatabase();
        try {
            return new RedisLockBackend(redisUri, scope, timeout, uri.param("tlsCa").map(java.io.File::new).orElse(null));
        } catch (RuntimeException e) {
            if (e instanceof LockBackendException) {
                throw e;
            }
            throw new LockBackendException("cannot connect to Redis at " + scope + ": " + e.getMessage(),
                    "check that redis-server runs there and accepts connections", e);
        }
    }

    static RedisURI redisUri(LockUri uri, Duration timeout) {
        if (!uri.body().startsWith("//") || uri.authority().isEmpty()) {
            throw new IllegalArgumentException("backend URI '" + uri.redacted() + "' has no host; write "
                    + uri.scheme() + "://host:6379[/db]");
        }
        String authority = uri.authority();
        String user = null;
        String password = null;
        int at = authority.lastIndexOf('@');
        if (at >= 0) {
            String info = authority.substring(0, at);
            authority = authority.substring(at + 1);
            int colon = info.indexOf(':');
            user = decode(colon < 0 ? info : info.substring(0, colon));
            password = colon < 0 ? null : decode(info.substring(colon + 1));
        }
        String host = authority;
        int port = 6379;
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
        int db = 0;
        String path = uri.path();
        if (!path.isEmpty() && !path.equals("/")) {
            try {
                db = Integer.parseInt(path.substring(1));
                if (db < 0) {
                    throw new NumberFormatException();
                }
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("backend URI '" + uri.redacted()
                        + "' names database '" + path.substring(1) + "': write a number, e.g. /0");
            }
        }
        RedisURI.Builder b = RedisURI.builder().withHost(host).withPort(port).withDatabase(db)
                .withSsl(uri.scheme().equals("rediss")).withTimeout(timeout);
        if (password != null && user != null && !user.isEmpty()) {
            b.withAuthentication(user, password.toCharArray());
        } else if (password != null) {
            b.withPassword(password.toCharArray());
        } else if (user != null && !user.isEmpty()) {
            // redis://password@host, as redis-cli -u reads it
            b.withPassword(user.toCharArray());
        }
        b.withClientName("kanuki");
        return b.build();
    }

    private static String decode(String s) {
        return URLDecoder.decode(s.replace("+", "%2B"), StandardCharsets.UTF_8);
    }
}
