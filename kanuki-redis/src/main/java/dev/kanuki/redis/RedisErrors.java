package dev.kanuki.redis;

import dev.kanuki.LockBackendException;
import java.util.Locale;

/**
 * Turns what Lettuce throws into one line that names the real cause and what to do. Lettuce wraps
 * every refusal met while connecting (a wrong password, an unknown database, a certificate that
 * is not trusted) as "Unable to connect to HOST:PORT", with the server's reply or the TLS failure
 * only in the causes: without this, an operator is told to check that redis-server runs when it
 * does, and sees the reason only with {@code --debug}.
 */
final class RedisErrors {
    private RedisErrors() {
    }

    /**
     * @param scope where the server is, as shown in messages
     * @param host the host name the client connected to, or null when not known
     * @param e what failed
     * @return the error naming the first cause recognised in {@code e}'s chain, or null when none is
     */
    static LockBackendException recognised(String scope, String host, Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
            String text = String.valueOf(t.getMessage());
            String upper = text.toUpperCase(Locale.ROOT);
            if (upper.startsWith("WRONGPASS") || upper.contains("INVALID PASSWORD")) {
                return new LockBackendException("Redis at " + scope + " refused the login: wrong user name or password",
                        "check the password and user in the URI: redis://[USER:]PASSWORD@HOST:PORT", e);
            }
            if (upper.startsWith("NOAUTH")) {
                return new LockBackendException("Redis at " + scope + " requires a password and none was given",
                        "give it in the URI: redis://:PASSWORD@HOST:PORT, or redis://USER:PASSWORD@HOST:PORT for an ACL user", e);
            }
            if (upper.contains("DB INDEX IS OUT OF RANGE")) {
                return new LockBackendException("Redis at " + scope + " has no database " + database(scope),
                        "use a database from 0 to the server's 'databases' setting less one: 0–15 by default", e);
            }
            if (upper.startsWith("NOPERM")) {
                return new LockBackendException("Redis at " + scope + " denies this user a command kanuki needs: "
                        + firstLine(text), "grant the ACL user the commands and keys kanuki uses (see docs/backends/redis.md)", e);
            }
            if (t instanceof java.security.cert.CertificateException && (text.contains("No subject alternative")
                    || text.contains("No name matching"))) {
                return new LockBackendException("Redis at " + scope + ": the server's TLS certificate is not for "
                        + (host != null ? host : "this host name") + " (" + firstLine(text) + ")",
                        "connect by a name or address that the certificate lists", e);
            }
            if (t instanceof java.security.cert.CertPathValidatorException
                    || t instanceof java.security.cert.CertPathBuilderException || text.contains("PKIX path")) {
                return new LockBackendException("Redis at " + scope + ": the server's TLS certificate is not trusted",
                        "pass its CA certificate with ?tlsCa=CA.pem, or add the CA to Java's trust store", e);
            }
            if (text.startsWith("Connection initialization timed out")) {
                // a paused or overloaded server; or, for rediss://, a port without TLS: the server
                // waits for a command while the client waits for the TLS handshake's answer
                return new LockBackendException("Redis at " + scope + " did not answer while connecting: " + firstLine(text),
                        scope.startsWith("rediss:") ? "check that this port speaks TLS (redis:// for one that does not) "
                                + "and that the server is not paused or overloaded"
                                : "check that the server is not paused or overloaded, or raise ?timeout=", e);
            }
        }
        return null;
    }

    /** {@return the database number at the end of a scope "scheme://host:port/DB"} */
    private static String database(String scope) {
        return scope.substring(scope.lastIndexOf('/') + 1);
    }

    private static String firstLine(String text) {
        int end = text.indexOf('\n');
        return (end < 0 ? text : text.substring(0, end)).strip();
    }
}
