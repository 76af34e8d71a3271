package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * One name, one lock, whatever the environment: the command line is read as UTF-8 under any
 * locale, and canonically equivalent spellings are one lock. Names are written as shell
 * {@code printf} escapes, so that kanuki gets exactly those bytes. These JVMs are started
 * without the {@code bin/kanuki} launcher, so under {@code LANG=C} too; the launcher's own part
 * (CMD's environment) is checked on the installed tarball by {@code src/test/dist-check.sh}.
 */
@Timeout(120)
class NamesAcrossLocalesTest {
    private static final String NFC = "caf\\303\\251";   // é precomposed, U+00E9
    private static final String NFD = "cafe\\314\\201";  // e + combining acute, U+0065 U+0301

    @TempDir
    Path dir;

    @Test
    void differentLocalesAndNormalizationsExcludeEachOther() throws Exception {
        String backend = "file:" + dir.resolve("locks");
        Cli.Running holder = Cli.startShell(dir, Map.of("LANG", "C"),
                "exec \"$KANUKI\" run -b " + backend + " \"$(printf '" + NFC + "')\" -- "
                        + "sh -c 'echo > held; exec sleep 60'");
        try {
            awaitFile(dir.resolve("held"), holder);
            for (Map<String, String> env : java.util.List.of(Map.of("LC_ALL", "C.UTF-8"), Map.of("LANG", "C"),
                    Map.<String, String>of())) {
                for (String spelling : new String[] {NFC, NFD}) {
                    Cli.Result other = Cli.startShell(dir, env, "exec \"$KANUKI\" run -b " + backend
                            + " -n \"$(printf '" + spelling + "')\" -- touch ran").await();
                    assertEquals(75, other.exitCode(), () -> env + " " + spelling + ": " + other.err());
                    assertFalse(Files.exists(dir.resolve("ran")), "a second holder ran under " + env);
                }
            }
            Cli.Result status = Cli.startShell(dir, Map.of("LC_ALL", "C.UTF-8"),
                    "exec \"$KANUKI\" status -b " + backend + " --json").await();
            assertTrue(status.out().contains("\"name\":\"caf\u00e9\""), status::out);
        } finally {
            holder.process.destroy();
            holder.await();
        }
    }

    @Test
    void aNameThatIsNotUtf8IsRefused() throws Exception {
        String backend = "file:" + dir.resolve("locks");
        for (Map<String, String> env : java.util.List.of(Map.of("LANG", "C"), Map.of("LC_ALL", "C.UTF-8"))) {
            Cli.Result r = Cli.startShell(dir, env, "exec \"$KANUKI\" run -b " + backend
                    + " \"$(printf 'caf\\351')\" -- touch ran").await();
            assertEquals(2, r.exitCode(), r::err);
            assertEquals(1, r.errLines().size(), r::err);
            assertTrue(r.err().startsWith("kanuki: argument 4 ('caf\\xe9') is not valid UTF-8"), r::err);
            assertFalse(Files.exists(dir.resolve("ran")));
        }
    }

    private static void awaitFile(Path file, Cli.Running owner) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!Files.exists(file) || Files.size(file) == 0) {
            if (!owner.process.isAlive()) {
                throw new AssertionError("kanuki exited with " + owner.process.exitValue() + ": "
                        + Files.readString(owner.err, StandardCharsets.UTF_8));
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(file + " did not appear within 30s");
            }
            Thread.sleep(20);
        }
    }
}
