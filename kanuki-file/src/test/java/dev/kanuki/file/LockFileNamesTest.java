package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class LockFileNamesTest {
    @Test
    void namesBecomeSafeFlatFileNames() {
        for (String name : List.of("../../etc/passwd", "/abs", ".hidden", "..", "a/b", "x".repeat(1024), "名前", "\n")) {
            String stem = LockFileNames.stem(name, "L");
            assertFalse(stem.contains("/") || stem.contains("\\") || stem.startsWith("."), stem);
            assertTrue(stem.matches("[A-Za-z0-9_-][A-Za-z0-9._-]*"), stem);
            assertTrue(stem.length() <= 40 + 1 + 32, stem);
        }
    }

    @Test
    void namesThatLookAlikeGetDifferentFiles() {
        assertNotEquals(LockFileNames.stem("a/b", "L"), LockFileNames.stem("a_b", "L"));
        assertNotEquals(LockFileNames.stem("x", "L"), LockFileNames.stem("x", "S"));
        assertNotEquals(LockFileNames.stem("x".repeat(41), "L"), LockFileNames.stem("x".repeat(42), "L"));
    }
}
