package dev.kanuki;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class LockNamesTest {
    @Test
    void acceptsAnyTextUpToTheLimit() {
        for (String name : new String[] {"a", "../x", "名前", "😀", "x".repeat(LockNames.MAX_LENGTH), " "}) {
            assertEquals(name, LockNames.validate(name));
        }
    }

    @Test
    void rejectsWhatNoBackendCouldStoreSafely() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LockNames.validate("")).getMessage().contains("empty"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LockNames.validate("ab\0")).getMessage().contains("index 2"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LockNames.validate("x".repeat(10_000)))
                .getMessage().contains("10000 characters"));
        assertThrows(IllegalArgumentException.class, () -> LockNames.validate("\uDC00x"));
        assertThrows(NullPointerException.class, () -> LockNames.validate(null));
    }

    @Test
    void printableEscapesControlCharactersAndCutsLongNames() {
        assertEquals("a\\x00b\\x1b", LockNames.printable("a\0b\u001b"));
        assertEquals(83, LockNames.printable("y".repeat(500)).length());
    }
}
