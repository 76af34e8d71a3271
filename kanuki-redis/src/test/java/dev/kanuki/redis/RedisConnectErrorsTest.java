package dev.kanuki.redis;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockUri;
import dev.kanuki.testkit.RedisServer;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Each reason a connection to Redis is refused is named in the error's one line, with what to do,
 * rather than "cannot connect … check that redis-server runs there": a wrong or missing password,
 * a database out of range, a certificate that is not trusted or is for another host, a TLS client
 * talking to a port without TLS.
 */
@Tag("servers")
class RedisConnectErrorsTest {
    private static final String PASSWORD = "s3cret";
    private static RedisServer server;
    private static RedisServer tls;

    @BeforeAll
    static void start() {
        server = RedisServer.start();
        RedisClient admin = RedisClient.create("redis://127.0.0.1:" + server.port());
        try (StatefulRedisConnection<String, String> c = admin.connect()) {
            c.sync().configSet("requirepass", PASSWORD);
        } finally {
            admin.shutdown();
        }
        tls = RedisServer.startTls();
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (tls != null) {
            tls.close();
        }
    }

    private static LockBackendException failure(String uri) {
        return assertThrows(LockBackendException.class, () -> {
            LockBackend backend = new RedisLockBackendFactory().create(LockUri.parse(uri));
            backend.close();
        });
    }

    private static void assertNames(LockBackendException e, String inMessage, String inHint) {
        String line = e.getMessage() + " / " + e.hint();
        assertTrue(e.getMessage().contains(inMessage), line);
        assertTrue(e.hint().contains(inHint), line);
        assertFalse(line.contains("redis-server runs"), line);
        assertFalse(e.getMessage().contains("\n"), line);
        assertFalse(line.contains(PASSWORD), "the password is not shown: " + line);
    }

    @Test
    void aWrongPasswordIsCalledSo() {
        assertNames(failure("redis://:wrong@127.0.0.1:" + server.port()), "wrong user name or password", "password");
    }

    @Test
    void aMissingPasswordIsCalledSo() {
        assertNames(failure("redis://127.0.0.1:" + server.port()), "requires a password", "redis://:PASSWORD@");
    }

    @Test
    void aDatabaseOutOfRangeIsCalledSo() {
        assertNames(failure("redis://:" + PASSWORD + "@127.0.0.1:" + server.port() + "/99"),
                "no database 99", "databases");
    }

    @Test
    void anUntrustedCertificateIsCalledSo() {
        assertNames(failure("rediss://127.0.0.1:" + tls.port()), "certificate is not trusted", "tlsCa=");
    }

    @Test
    void aCertificateForAnotherHostIsCalledSo() {
        assertNames(failure(tls.kanukiUri().replace("127.0.0.1", "localhost")),
                "certificate is not for localhost", "name");
    }

    @Test
    void tlsToAPortWithoutTlsIsCalledSo() {
        // the server waits for a command, the client for the handshake's answer, until the timeout
        assertNames(failure("rediss://:" + PASSWORD + "@127.0.0.1:" + server.port() + "?timeout=2s"),
                "did not answer while connecting", "speaks TLS");
    }
}
