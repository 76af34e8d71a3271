package dev.kanuki.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockProvider;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LockUriTest {
    @Test
    void splitsSchemeAuthorityPathAndOptions() {
        LockUri uri = LockUri.parse("postgresql://db.local:5433/app?user=me&lease=5s");
        assertEquals("postgresql", uri.scheme());
        assertEquals("db.local:5433", uri.authority());
        assertEquals("/app", uri.path());
        assertEquals("me", uri.param("user").orElseThrow());
        assertEquals(Duration.ofSeconds(5), uri.durationParam("lease", Duration.ZERO));
    }

    @Test
    void keepsFilePathsWithSpacesAsWritten() {
        LockUri uri = LockUri.parse("file:/var/lock/my app?strategy=os");
        assertEquals("/var/lock/my app", uri.path());
        assertEquals("", uri.authority());
        assertEquals("file:", LockUri.parse("FILE:").scheme() + ":");
    }

    @Test
    void rejectsMalformedUrisWithAUsefulMessage() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LockUri.parse("/var/lock")).getMessage()
                .contains("no scheme"));
        assertThrows(IllegalArgumentException.class, () -> LockUri.parse(""));
        assertThrows(IllegalArgumentException.class, () -> LockUri.parse("mem:?lease"));
        assertThrows(IllegalArgumentException.class, () -> LockUri.parse("mem:?a=1&a=2"));
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                () -> LockUri.parse("mem:?leese=5s").rejectUnknownOptions(Set.of()));
        assertTrue(unknown.getMessage().contains("leese") && unknown.getMessage().contains("lease"), unknown.getMessage());
    }

    @Test
    void secretsAreMaskedInMessages() {
        assertEquals("postgresql://db/app?user=me&password=***&lease=5s",
                LockUri.parse("postgresql://db/app?user=me&password=hunter2&lease=5s").redacted());
        assertEquals("mysql://me:***@db:3306/app", LockUri.parse("mysql://me:hunter2@db:3306/app").redacted());
        assertEquals("file:/var/lock/app", LockUri.parse("file:/var/lock/app").redacted());
    }

    @Test
    void unknownSchemesAndBadEngineOptionsFailAtOpen() {
        IllegalArgumentException scheme = assertThrows(IllegalArgumentException.class, () -> LockProvider.open("carrier://x"));
        assertTrue(scheme.getMessage().contains("carrier") && scheme.getMessage().contains("mem"), scheme.getMessage());
        assertThrows(IllegalArgumentException.class, () -> LockProvider.open("mem:?lease=10ms"));
        assertThrows(IllegalArgumentException.class, () -> LockProvider.open("mem:?poll=0"));
        assertThrows(IllegalArgumentException.class, () -> LockProvider.open("mem:?lease=often"));
    }

    @Test
    void readsServerListsAndCredentials() {
        LockUri uri = LockUri.parse("memcached://app:s%40cret@a.local,b.local:11212,[::1]:11213/x");
        assertEquals(java.util.List.of(new LockUri.Server("a.local", 11211), new LockUri.Server("b.local", 11212),
                new LockUri.Server("::1", 11213)), uri.servers(11211));
        assertEquals("app", uri.user().orElseThrow());
        assertEquals("s@cret", uri.password().orElseThrow());
        assertEquals("[::1]:11213", uri.servers(1).get(2).toString());
        assertTrue(LockUri.parse("etcd://h:2379").user().isEmpty());
        assertTrue(LockUri.parse("etcd://pw@h").password().isEmpty());
        for (String bad : new String[] {"etcd://", "etcd:/x", "etcd://h:0", "etcd://h:x", "etcd://a,,b", "etcd://h:70000"}) {
            assertThrows(IllegalArgumentException.class, () -> LockUri.parse(bad).servers(2379), bad);
        }
    }
}
