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
    void canonicallyEquivalentSpellingsBecomeTheNfcForm() {
        String nfc = "caf\u00e9/\uac00";                // é and the Hangul syllable 가, precomposed
        String nfd = "cafe\u0301/\u1100\u1161";         // e + combining acute, and the two jamo of 가
        assertEquals(nfc, LockNames.validate(nfd));
        assertEquals(nfc, LockNames.validate(nfc));
        String ascii = "plain-ascii";
        assertTrue(ascii == LockNames.validate(ascii), "a name already in NFC is returned as is");
        // Canonical compositions only: a compatibility character such as the ﬁ ligature stays itself.
        assertEquals("\ufb01le", LockNames.validate("\ufb01le"));
    }
}
