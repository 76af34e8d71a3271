package dev.kanuki.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class SafeNamesTest {
    @Test
    void namesBecomeSafeFlatFileNames() {
        for (String name : List.of("../../etc/passwd", "/abs", ".hidden", "..", "a/b", "x".repeat(1024), "名前", "\n")) {
            String stem = SafeNames.stem(name, "L");
            assertFalse(stem.contains("/") || stem.contains("\\") || stem.startsWith("."), stem);
            assertTrue(stem.matches("[A-Za-z0-9_-][A-Za-z0-9._-]*"), stem);
            assertTrue(stem.length() <= 40 + 1 + 32, stem);
        }
    }

    @Test
    void namesThatLookAlikeGetDifferentFiles() {
        assertNotEquals(SafeNames.stem("a/b", "L"), SafeNames.stem("a_b", "L"));
        assertNotEquals(SafeNames.stem("x", "L"), SafeNames.stem("x", "S"));
        assertNotEquals(SafeNames.stem("x".repeat(41), "L"), SafeNames.stem("x".repeat(42), "L"));
    }

    @Test
    void printableEscapesControlCharactersAndCutsLongNames() {
        assertEquals("a\\x00b\\x1b", SafeNames.printable("a\0b\u001b"));
        assertEquals("x\\u202ey\\u0085", SafeNames.printable("x\u202ey\u0085"));
        assertEquals(83, SafeNames.printable("y".repeat(500)).length());
        assertTrue(SafeNames.isPrintable('a') && SafeNames.isPrintable('名'));
        assertFalse(SafeNames.isPrintable('\u001b') || SafeNames.isPrintable('\u009b') || SafeNames.isPrintable('\u2028'));
    }
}
