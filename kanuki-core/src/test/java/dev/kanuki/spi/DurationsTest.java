package dev.kanuki.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class DurationsTest {
    @Test
    void readsEveryWrittenForm() {
        assertEquals(Duration.ofMillis(500), Durations.parse("500ms"));
        assertEquals(Duration.ofSeconds(5), Durations.parse("5s"));
        assertEquals(Duration.ofMinutes(2), Durations.parse("2m"));
        assertEquals(Duration.ofHours(1), Durations.parse("1h"));
        assertEquals(Duration.ofSeconds(10), Durations.parse("10"), "a plain number is seconds, as in flock(1)");
        assertEquals(Duration.ofMillis(250), Durations.parse("0.25"));
        assertEquals(Duration.ofMillis(1500), Durations.parse("1.5s"));
        assertEquals(Duration.ZERO, Durations.parse("0"));
    }

    @Test
    void rejectsNonsenseWithTheReason() {
        assertThrows(IllegalArgumentException.class, () -> Durations.parse("soon"));
        assertThrows(IllegalArgumentException.class, () -> Durations.parse("-5s"));
        assertThrows(IllegalArgumentException.class, () -> Durations.parse(""));
        assertThrows(IllegalArgumentException.class, () -> Durations.parse("5 parsecs"));
        assertThrows(IllegalArgumentException.class, () -> Durations.parse("99999999999999h"));
    }

    @Test
    void formatsReadably() {
        assertEquals("500ms", Durations.format(Duration.ofMillis(500)));
        assertEquals("5s", Durations.format(Duration.ofSeconds(5)));
        assertEquals("1.5s", Durations.format(Duration.ofMillis(1500)));
        assertEquals("2m", Durations.format(Duration.ofMinutes(2)));
        assertEquals("forever", Durations.format(Duration.ofNanos(Long.MAX_VALUE)));
        assertEquals(Duration.ofMillis(1500), Durations.parse(Durations.format(Duration.ofMillis(1500))));
    }
}
