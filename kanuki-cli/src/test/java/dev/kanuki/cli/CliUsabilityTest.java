package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kanuki.engine.BackendRegistry;
import dev.kanuki.spi.LockBackendFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** What a person meets first: the help, shell completion, and error messages. */
@Timeout(120)
@Tag("slow")
class CliUsabilityTest {
    @TempDir
    Path dir;

    @Test
    void helpListsEveryBackendWithItsUriForm() throws Exception {
        Cli.Result r = Cli.run(dir, "--help");
        assertEquals(0, r.exitCode(), r::err);
        for (Map.Entry<String, LockBackendFactory> e : BackendRegistry.factories().entrySet()) {
            if (e.getValue().getClass().getPackageName().equals(KanukiCli.class.getPackageName())) {
                continue; // a test-only backend
            }
            String scheme = e.getKey();
            assertTrue(r.out().lines().anyMatch(line -> line.matches("\\s+(.*[ (])?" + scheme + ":.*")),
                    "--help does not show the URI form of " + scheme + ":\n" + r.out());
        }
        assertTrue(r.out().contains("file:[DIR][?strategy=os|mkdir|symlink|rename|create|queue][&lease=10s]"), r::out);
        assertTrue(r.out().contains("&shared=group"), r::out);
        assertTrue(r.out().contains("completion"), r::out);
    }

    @Test
    void completionPrintsAScriptBashAccepts() throws Exception {
        for (String shell : List.of("bash", "zsh")) {
            Cli.Result r = Cli.run(dir, "completion", shell);
            assertEquals(0, r.exitCode(), r::err);
            assertTrue(r.out().contains("complete -F") && r.out().contains("run") && r.out().contains("--backend"),
                    r::out);
            Path script = dir.resolve("kanuki-completion." + shell);
            Files.writeString(script, r.out());
            Process check = new ProcessBuilder("bash", "-n", script.toString()).redirectErrorStream(true).start();
            String complaints = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(check.waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, check.exitValue(), "bash -n: " + complaints);
        }
        assertEquals(2, Cli.run(dir, "completion", "fish").exitCode());
    }

    @Test
    void errorsAreOneLineAndDebugAddsTheStackTrace() throws Exception {
        Path notADirectory = Files.writeString(dir.resolve("plain-file"), "x");
        String backend = "file:" + notADirectory;

        Cli.Result plain = Cli.run(dir, "run", "-b", backend, "job", "--", "true");
        assertEquals(3, plain.exitCode(), plain::err);
        assertEquals(1, plain.errLines().size(), plain::err);
        assertTrue(plain.err().startsWith("kanuki: lock directory " + notADirectory + " is not a directory"), plain::err);
        assertFalse(plain.err().contains("\tat "), plain::err);

        for (String scheme : List.of("file:", "sqlite:")) {
            Cli.Result under = Cli.run(dir, "run", "-b", scheme + notADirectory + "/locks", "job", "--", "true");
            assertEquals(3, under.exitCode(), under::err);
            assertEquals(1, under.errLines().size(), under::err);
            assertTrue(under.err().contains("a part of the path is a file, not a directory"), under::err);
            assertFalse(under.err().contains("java.nio"), under::err);
        }

        for (String[] args : List.of(new String[] {"--debug", "status", "-b", backend, "job"},
                new String[] {"run", "--debug", "-b", backend, "job", "--", "true"})) {
            Cli.Result debug = Cli.run(dir, args);
            assertEquals(3, debug.exitCode(), debug::err);
            assertTrue(debug.err().startsWith("kanuki: lock directory " + notADirectory), debug::err);
            assertTrue(debug.err().contains("dev.kanuki.LockBackendException") && debug.err().contains("\tat "),
                    () -> String.join(" ", args) + ": " + debug.err());
        }
    }

    @Test
    void aReadOnlyFileSystemIsCalledSo() throws Exception {
        Path mountPoint = Files.createDirectories(dir.resolve("ro"));
        // A private mount namespace (as an unprivileged user namespace's root): nothing is mounted for others.
        String mount = "unshare -rm sh -c 'mount -t tmpfs -o ro tmpfs \"$0\" && exec \"$@\"' " + mountPoint + " ";
        Cli.Result probe = Cli.startShell(dir, Map.of(), mount + "true").await();
        assumeTrue(probe.exitCode() == 0, "cannot mount a read-only tmpfs here: " + probe.err());

        for (String backend : List.of("file:" + mountPoint, "file:" + mountPoint + "/locks",
                "sqlite:" + mountPoint, "sqlite:" + mountPoint + "/locks")) {
            Cli.Result r = Cli.startShell(dir, Map.of(),
                    mount + "\"$KANUKI\" run -b " + backend + " job -- true").await();
            assertEquals(3, r.exitCode(), r::err);
            assertEquals(1, r.errLines().size(), r::err);
            assertTrue(r.err().contains("read-only file system") || r.err().contains("Read-only file system"),
                    backend + ": " + r.err());
            assertFalse(r.err().contains("permission"), backend + ": " + r.err());
            assertFalse(r.err().contains("java.nio"), backend + ": " + r.err());
        }
    }

    /**
     * A read-only bind mount of a writable file system: the mount table, found by device, shows the
     * writable mount, so the directory, existing already, was called "not writable by user …
     * (fix its permissions)"; and every command, the inspecting ones too, meets it.
     */
    @Test
    void aReadOnlyBindMountIsCalledSo() throws Exception {
        Path source = Files.createDirectories(dir.resolve("src"));
        Files.createDirectories(source.resolve("file-locks"));
        Files.createDirectories(source.resolve("sqlite-locks"));
        Path mountPoint = Files.createDirectories(dir.resolve("ro"));
        String mount = "unshare -rm sh -c 'mount --bind \"$0\" \"$1\" && mount -o remount,ro,bind \"$1\" && shift && exec \"$@\"' "
                + source + " " + mountPoint + " ";
        Cli.Result probe = Cli.startShell(dir, Map.of(), mount + "true").await();
        assumeTrue(probe.exitCode() == 0, "cannot make a read-only bind mount here: " + probe.err());

        for (String backend : List.of("file:" + mountPoint, "file:" + mountPoint + "/file-locks",
                "file:" + mountPoint + "/file-locks?strategy=mkdir", "sqlite:" + mountPoint + "/sqlite-locks")) {
            for (String command : List.of("run -b " + backend + " job -- true", "status -b " + backend,
                    "status -b " + backend + " job", "prune -b " + backend, "break -b " + backend + " job")) {
                Cli.Result r = Cli.startShell(dir, Map.of(), mount + "\"$KANUKI\" " + command.replace("?", "\\?")).await();
                assertEquals(3, r.exitCode(), () -> command + ": " + r.err());
                assertEquals(1, r.errLines().size(), () -> command + ": " + r.err());
                assertTrue(r.err().contains("read-only file system"), () -> command + ": " + r.err());
                assertFalse(r.err().contains("permission"), () -> command + ": " + r.err());
            }
        }
    }
}
