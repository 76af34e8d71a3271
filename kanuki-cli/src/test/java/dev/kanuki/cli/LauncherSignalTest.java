package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The launcher script ends by exec'ing java, whatever it chose for the JVM's version: the pid a
 * user or a service manager signals is the JVM itself, with no shell, subshell or trap left in
 * between, so SIGHUP to it reaches the command and kanuki exits 129.
 */
@Tag("slow")
class LauncherSignalTest {
    @TempDir
    Path dir;

    private final List<Process> started = new ArrayList<>();

    @AfterEach
    void killLeftovers() {
        started.forEach(p -> p.descendants().forEach(ProcessHandle::destroyForcibly));
        started.forEach(Process::destroyForcibly);
    }

    @Test
    void theLaunchedPidIsTheJvmAndSighupEndsItOnThisJava() throws Exception {
        assertHangUpEnds(Path.of(System.getProperty("java.home")));
    }

    @Test
    void theLaunchedPidIsTheJvmAndSighupEndsItOnANewerJava() throws Exception {
        Optional<Path> newer = QuietStderrTest.newerJava();
        assumeTrue(newer.isPresent(), "no JDK 23 or later found (set KANUKI_TEST_NEWER_JAVA_HOME, "
                + "or install one under /usr/lib/jvm): the launcher's choices for newer Java are not checked");
        assertHangUpEnds(newer.get());
    }

    private void assertHangUpEnds(Path javaHome) throws Exception {
        Path work = Files.createTempDirectory(dir, "run");
        // default signal dispositions, as from a shell: a JVM that inherits SIGHUP ignored keeps ignoring it
        List<String> command = new ArrayList<>(List.of("env", "--default-signal", "bash",
                Path.of("src/main/dist/bin/kanuki").toAbsolutePath().toString(),
                "run", "-b", "file:" + work.resolve("locks"), "job", "--", "sh", "-c", "echo $$ > cmd.pid; exec sleep 300"));
        ProcessBuilder builder = new ProcessBuilder(command).directory(work.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(work.resolve("err").toFile());
        builder.environment().put("JAVA_HOME", javaHome.toString());
        builder.environment().put("KANUKI_CLASSPATH", System.getProperty("java.class.path"));
        builder.environment().put("KANUKI_CDS", "off"); // no archive of the test class path in the user's cache
        builder.environment().remove("JAVA_OPTS");
        Process kanuki = builder.start();
        started.add(kanuki);
        Processes.pidIn(work.resolve("cmd.pid"));

        String executable = Files.readSymbolicLink(Path.of("/proc/" + kanuki.pid() + "/exe")).toString();
        assertTrue(executable.endsWith("/java"), "the launched pid runs " + executable + ", not java");
        Processes.kill("HUP", Long.toString(kanuki.pid()));
        assertTrue(kanuki.waitFor(60, TimeUnit.SECONDS), "kanuki did not exit after SIGHUP");
        String err = Processes.readQuietly(work.resolve("err"));
        assertEquals(128 + 1, kanuki.exitValue(), err);
        assertEquals("", err);
    }
}
