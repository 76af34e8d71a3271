package dev.kanuki.memcached;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.spi.LockUri;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** URIs and leases: what the factory accepts, what it refuses and why. */
class MemcachedLockBackendFactoryTest {

    private static List<MemcachedLockBackendFactory.HostPort> servers(String uri) {
        return MemcachedLockBackendFactory.servers(LockUri.parse(uri));
    }

    @Test
    void serversAreListedWithTheDefaultPort() {
        assertEquals(List.of(new MemcachedLockBackendFactory.HostPort("cache1", 11211),
                        new MemcachedLockBackendFactory.HostPort("10.0.0.2", 11300),
                        new MemcachedLockBackendFactory.HostPort("::1", 11211),
                        new MemcachedLockBackendFactory.HostPort("fe80::1", 4000)),
                servers("memcached://cache1,10.0.0.2:11300,[::1],[fe80::1]:4000/?timeout=2s"));
    }

    @Test
    void malformedUrisSayWhatIsWrong() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> servers("memcached:")).getMessage()
                .contains("names no server"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> servers("memcached://h/db")).getMessage()
                .contains("no databases"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> servers("memcached://u:p@h")).getMessage()
                .contains("no authentication"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> servers("memcached://h:99999")).getMessage()
                .contains("bad port"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> servers("memcached://h,h:11211")).getMessage()
                .contains("twice"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> servers("memcached://h,,g")).getMessage()
                .contains("without a host"));
        MemcachedLockBackendFactory factory = new MemcachedLockBackendFactory();
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> factory.create(LockUri.parse("memcached://h?tmeout=1s"))).getMessage().contains("tmeout"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> factory.create(LockUri.parse("memcached://h?timeout=0s"))).getMessage().contains("positive"));
        assertTrue(assertThrows(IllegalArgumentException.class,
                () -> factory.create(LockUri.parse("memcached://h?lease=960h"))).getMessage().contains("30 days"));
        factory.create(LockUri.parse("memcached://h?lease=696h")).close();
    }

    @Test
    void theScopeIsTheSetOfServers() {
        MemcachedLockBackendFactory factory = new MemcachedLockBackendFactory();
        try (var a = factory.create(LockUri.parse("memcached://b:1,a:2"));
             var b = factory.create(LockUri.parse("memcached://a:2,b:1?timeout=1s"))) {
            assertEquals("memcached://a:2,b:1", a.scope());
            assertEquals(a.scope(), b.scope());
        }
    }

    @Test
    void leasesBecomeWholeSecondsPlusTwoAtMostThirtyDays() {
        assertEquals(3, MemcachedLockBackend.ttlSeconds(Duration.ofMillis(100)));
        assertEquals(3, MemcachedLockBackend.ttlSeconds(Duration.ofSeconds(1)));
        assertEquals(4, MemcachedLockBackend.ttlSeconds(Duration.ofMillis(1500)));
        assertEquals(32, MemcachedLockBackend.ttlSeconds(Duration.ofSeconds(30)));
        assertEquals(30L * 24 * 3600, MemcachedLockBackend.ttlSeconds(Duration.ofDays(30)));
        assertEquals(30L * 24 * 3600, MemcachedLockBackend.ttlSeconds(Duration.ofDays(400)));
    }
}
