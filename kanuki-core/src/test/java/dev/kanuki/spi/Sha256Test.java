package dev.kanuki.spi;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The hand-written SHA-256 gives the JDK's digest: lock files keep their names across versions. */
class Sha256Test {
    @Test
    void knownVectors() {
        assertEquals("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
                HexFormat.of().formatHex(Sha256.digest(new byte[0])));
        assertEquals("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                HexFormat.of().formatHex(Sha256.digest("abc".getBytes(StandardCharsets.US_ASCII))));
    }

    @Test
    void sameAsTheJdkForEveryLengthAroundTheBlockBoundaries() throws Exception {
        Random random = new Random(42);
        for (int length = 0; length < 300; length++) {
            byte[] message = new byte[length];
            random.nextBytes(message);
            assertArrayEquals(MessageDigest.getInstance("SHA-256").digest(message), Sha256.digest(message),
                    "length " + length);
        }
    }

    @Test
    void lockFileNamesAreUnchanged() {
        // The name kanuki has always given lock 'x' (file: os strategy): x.958db9d6a1e66f1b80feb8861379d11c.lock
        assertEquals("x.958db9d6a1e66f1b80feb8861379d11c", SafeNames.stem("x", "L"));
    }
}
