package dev.kanuki.spi;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class NameHintsTest {

    @Test
    void aNameIsFencedUntilAHolderDoesNotAsk() {
        NameHints hints = new NameHints(10);
        assertFalse(hints.isFenced("a"));
        hints.fenced("a", true);
        assertTrue(hints.isFenced("a"));
        assertFalse(hints.isFenced("b"));
        hints.fenced("a", false);
        assertFalse(hints.isFenced("a"));
    }

    @Test
    void aNameCountsAsContendedForASecondOrUntilFreed() {
        NameHints hints = new NameHints(10);
        long t = 1_000_000_000L;
        assertFalse(hints.isContended("a", t));
        hints.contended("a", t);
        assertTrue(hints.isContended("a", t + NameHints.CONTENDED_MEMORY_NANOS));
        assertFalse(hints.isContended("a", t + NameHints.CONTENDED_MEMORY_NANOS + 1));
        hints.contended("a", t);
        hints.free("a");
        assertFalse(hints.isContended("a", t));
    }

    @Test
    void eachKindForgetsEverythingWhenFull() {
        NameHints hints = new NameHints(3);
        for (String n : new String[] {"a", "b", "c"}) {
            hints.fenced(n, true);
            hints.contended(n, 0);
        }
        assertTrue(hints.isFenced("a") && hints.isContended("a", 0));
        hints.fenced("d", true);
        hints.contended("d", 0);
        assertFalse(hints.isFenced("a"), "a full set starts again");
        assertFalse(hints.isContended("a", 0), "a full map starts again");
        assertTrue(hints.isFenced("d") && hints.isContended("d", 0));
    }
}
