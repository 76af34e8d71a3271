package dev.kanuki.etcd;

import dev.kanuki.LockBackendException;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockBackendFactory;
import dev.kanuki.spi.LockUri;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Makes the etcd backend for {@code etcd://[user:password@]host[:port][,host2[:port]...][/prefix]}
 * (etcd v3 API over gRPC; port 2379 by default; keys under {@code /prefix}, default
 * {@code /kanuki}). Options: {@code timeout} (how long opening waits for a member, and each
 * request's deadline; default 5s) and the engine's {@code lease}, {@code poll} and
 * {@code waitThreads}. See {@link EtcdLockBackend}.
 */
public final class EtcdLockBackendFactory implements LockBackendFactory {
    private static final Set<String> OPTIONS = Set.of("timeout");
    private static final int DEFAULT_PORT = 2379;

    /** Used by {@link java.util.ServiceLoader}. */
    public EtcdLockBackendFactory() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("etcd");
    }

    @Override
    public LockBackend create(LockUri uri) {
        uri.rejectUnknownOptions(OPTIONS);
        Duration timeout = uri.durationParam("timeout", Duration.ofSeconds(5));
        List<LockUri.Server> servers = uri.servers(DEFAULT_PORT);
        String prefix = prefix(uri);
        String scope = "etcd://" + servers.stream().map(LockUri.Server::toString).collect(Collectors.joining(",")) + prefix;
        List<String> endpoints = servers.stream().map(s -> "http://" + s).collect(Collectors.toList());
        try {
            return new EtcdLockBackend(endpoints, uri.user().orElse(null), uri.password().orElse(null), prefix, scope,
                    timeout);
        } catch (RuntimeException e) {
            if (e instanceof LockBackendException) {
                throw e;
            }
            throw new LockBackendException("cannot connect to etcd at " + scope + ": " + e.getMessage(),
                    "check that etcd runs there and accepts client connections", e);
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
        if (path.contains("//") || path.contains("\u0000")) {
            throw new IllegalArgumentException("backend URI '" + uri.redacted() + "' has a bad key prefix '" + path
                    + "'; write etcd://host:2379/myapp/locks");
        }
        return path;
    }
}
