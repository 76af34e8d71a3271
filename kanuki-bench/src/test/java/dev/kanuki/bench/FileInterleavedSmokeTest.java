package dev.kanuki.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link FileInterleaved} runs every case in a tiny configuration and both sides do their work
 * (each issues fencing tokens; the handoff partners stay alive). No timing is checked.
 */
@Tag("slow")
class FileInterleavedSmokeTest {

    @ParameterizedTest
    @ValueSource(strings = {"os", "mkdir", "symlink", "rename", "create", "queue"})
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void everyStrategyRunsBothSides(String strategy) throws Exception {
        FileInterleaved.Result result = FileInterleaved.run(strategy, 0, 1, 2, 3);
        assertEquals(1, result.rounds().size());
        for (double us : result.rounds().get(0)) {
            assertTrue(us > 0, result.report());
        }
        assertTrue(result.report().contains("kanuki/same"), result.report());
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void handoffRunsFourPairs() throws Exception {
        FileInterleaved.Result result = FileInterleaved.run("handoff", 0, 1, 2, 5);
        assertEquals(4, result.rounds().get(0).length);
    }

    @Test
    void byHandOsIssuesIncreasingTokensAndChecksIdentity(@TempDir Path dir) throws Exception {
        try (OsByHand hand = new OsByHand(dir.resolve("bench.lock"))) {
            long first = hand.sameWork();
            assertEquals(first + 1, hand.sameWork());
            hand.bare();
            java.nio.file.Files.delete(dir.resolve("bench.lock"));
            org.junit.jupiter.api.Assertions.assertThrows(java.io.IOException.class, hand::sameWork,
                    "a lock on a removed file must fail the identity check");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mkdir", "symlink", "rename", "create", "queue"})
    void byHandTtlIssuesIncreasingTokens(String strategy, @TempDir Path dir) throws Exception {
        TtlByHand hand = new TtlByHand(dir, strategy);
        long first = hand.sameWork();
        hand.bare();
        assertEquals(first + 1, hand.sameWork());
    }
}
