package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.spi.SafeNames;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A victim file hard-linked at a lock artefact's path is never written through: whatever
 * kanuki does there (acquire, renew, release, break), the victim stays byte for byte, and an
 * acquisition either succeeds (the artefact was replaced, not written in place) or fails with an
 * error naming the path.
 */
@Tag("slow")
class HardLinkTest {
    private static final byte[] PRECIOUS = "precious data, never to be changed\n".getBytes(StandardCharsets.UTF_8);

    @TempDir
    Path tempDir;

    static List<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        String[][] artefacts = {
            {"os", "STEM.lock"},
            {"mkdir", "STEM.lockdir/owner"},
            {"symlink", "STEM.lnk"},
            {"rename", "STEM.free"},
            {"rename", "STEM.held"},
            {"rename", "STEM.init"},
            {"create", "STEM.lck"},
            {"queue", "STEM.queue"},
        };
        for (String[] a : artefacts) {
            cases.add(Arguments.of(a[0], a[1]));
        }
        for (String s : List.of("os", "mkdir", "symlink", "rename", "create", "queue")) {
            cases.add(Arguments.of(s, "COUNTER"));
            cases.add(Arguments.of(s, "kanuki-fence"));
            if (!s.equals("os")) {
                cases.add(Arguments.of(s, "STEM.breaker"));
            }
        }
        return cases;
    }

    @ParameterizedTest(name = "{0}: victim linked at {1}")
    @MethodSource("cases")
    void victimLinkedAtAnArtefactIsNeverWritten(String strategy, String artefact) throws Exception {
        Path dir = Files.createDirectories(tempDir.resolve("locks"));
        Path victim = Files.write(tempDir.resolve("victim"), PRECIOUS);
        String uri = "file:" + dir + "?strategy=" + strategy + "&lease=3s";
        try (LockProvider provider = LockProvider.open(uri)) {
            Path planted;
            if (artefact.equals("COUNTER")) {
                planted = SpecialFilesTest.removeCounter(provider, dir);
            } else {
                planted = dir.resolve(artefact.replace("STEM", SafeNames.stem("board", "L")));
                Files.createDirectories(planted.getParent());
            }
            Files.createLink(planted, victim);
            assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
                for (int round = 0; round < 3; round++) {
                    try (LockHandle h = provider.lock("board").acquire(Duration.ofSeconds(3))) {
                        if (round == 0) {
                            // past the first renewal (a third of the lease), with two thirds of the
                            // lease left, so a renewal missed on a loaded machine does not lose it
                            Thread.sleep(1_100);
                        }
                        h.verify();
                    } catch (LockBackendException e) {
                        assertTrue(e.getMessage().contains(planted.getFileName().toString())
                                || e.getMessage().contains("hard link"), e.getMessage());
                    } catch (dev.kanuki.LockException e) {
                        // Junk at a breaker or marker path blocks the lock for a while (until it is old
                        // enough to be cleared); what matters here is that nothing is written through it.
                        assertTrue(artefact.endsWith(".breaker") || artefact.endsWith(".init"), e.toString());
                    }
                }
            });
        }
        assertArrayEquals(PRECIOUS, Files.readAllBytes(victim), "the victim was written through its link at " + artefact);
    }
}
