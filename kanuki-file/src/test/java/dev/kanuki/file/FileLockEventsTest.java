package dev.kanuki.file;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockEvent;
import dev.kanuki.LockEvent.Kind;
import dev.kanuki.LockHandle;
import dev.kanuki.LockLostException;
import dev.kanuki.LockProvider;
import dev.kanuki.spi.LockMode;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The event SPI on real lock files: acquired, refused, timed out and released fire once each
 * with the lock's fields, and a lock taken away behind its holder (its file deleted for the
 * {@code os} strategy, broken by force for a ttl strategy, as the contract suite does) fires
 * {@code LOST}, then {@code RELEASED} when the holder closes its handle.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FileLockEventsTest {
    private static final Duration LONG = Duration.ofSeconds(30);

    @TempDir
    Path tempDir;

    @ParameterizedTest
    @ValueSource(strings = {"os", "mkdir"})
    void eachEventFiresOnceWithItsFields(String strategy) throws Exception {
        Path dir = tempDir.resolve("locks");
        String uri = "file:" + dir + "?strategy=" + strategy + "&lease=3s";
        List<LockEvent> events = new CopyOnWriteArrayList<>();
        try (LockProvider locks = LockProvider.open(uri)) {
            locks.addListener(events::add);
            try (LockHandle h = locks.lock("events").acquire(LONG)) {
                assertTrue(locks.lock("events").tryAcquire().isEmpty());
                assertTrue(locks.lock("events").tryAcquire(Duration.ofMillis(200)).isEmpty());
                assertTrue(h.isHeld());
            }
            assertEquals(List.of(Kind.WAITING, Kind.ACQUIRED, Kind.WAITING, Kind.REFUSED, Kind.WAITING,
                    Kind.TIMED_OUT, Kind.RELEASED), kinds(events));
            for (LockEvent e : events) {
                assertEquals("events", e.name());
                assertEquals("file", e.scheme());
                assertEquals(LockMode.EXCLUSIVE, e.mode());
            }
            long holder = events.get(0).acquisition();
            assertEquals(holder, events.get(6).acquisition());
            assertTrue(events.get(6).held().compareTo(events.get(5).waited()) >= 0,
                    "the hold outlasted the timed-out wait inside it");
            assertInstanceOf(dev.kanuki.LockTimeoutException.class, events.get(5).error().orElseThrow());

            events.clear();
            LockHandle held = locks.lock("taken").acquire(LONG);
            takeAway(uri, dir, strategy, "taken");
            LockLostException reason = held.lost().get(60, TimeUnit.SECONDS);
            await().atMost(Duration.ofSeconds(30)).until(() -> events.size() >= 3);
            assertEquals(List.of(Kind.WAITING, Kind.ACQUIRED, Kind.LOST), kinds(events));
            assertEquals(reason, events.get(2).error().orElseThrow());
            held.close();
            assertEquals(List.of(Kind.WAITING, Kind.ACQUIRED, Kind.LOST, Kind.RELEASED), kinds(events));
            held.close();
            assertEquals(4, events.size(), "a second close fires nothing: " + events);
        }
    }

    /** As the file backends' contract tests take a lock away. */
    private static void takeAway(String uri, Path dir, String strategy, String name) throws Exception {
        if (!strategy.equals("os")) {
            try (LockProvider other = LockProvider.open(uri)) {
                other.breakLock(name, true);
            }
            return;
        }
        try (Stream<Path> list = Files.list(dir)) {
            for (Path p : list.toList()) {
                if (p.getFileName().toString().startsWith(name) && Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    Files.delete(p);
                }
            }
        }
    }

    private static List<Kind> kinds(List<LockEvent> events) {
        return events.stream().map(LockEvent::kind).collect(Collectors.toList());
    }
}
