package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kanuki.testkit.EtcdServer;
import dev.kanuki.testkit.MemcachedServer;
import dev.kanuki.testkit.PostgresServer;
import dev.kanuki.testkit.RedisServer;
import dev.kanuki.testkit.ZooKeeperServer;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A normal {@code kanuki run} or {@code status} writes nothing on standard error that is not
 * kanuki's own ("kanuki: …"): not gRPC's java.util.logging INFO lines (etcd), nor the JVM's
 * warnings about native access and sun.misc.Unsafe on Java 22 and later (Netty, SQLite's driver,
 * protobuf), nor ZooKeeper's or Curator's logging; on every backend with a server of its own kind. Cron mails whatever a job writes there. Run through the launcher script, as installed,
 * on this JVM and on a newer one when one is installed.
 */
@Tag("servers")
class QuietStderrTest {
    @TempDir
    Path dir;

    @Test
    void runAndStatusWriteOnlyKanukisOwnLinesOnThisJava() throws Exception {
        assertQuiet(Path.of(System.getProperty("java.home")));
    }

    @Test
    void runAndStatusWriteOnlyKanukisOwnLinesOnANewerJava() throws Exception {
        Optional<Path> newer = newerJava();
        assumeTrue(newer.isPresent(), "no JDK 23 or later found (set KANUKI_TEST_NEWER_JAVA_HOME, "
                + "or install one under /usr/lib/jvm): the JVM's warnings on newer Java are not checked");
        assertQuiet(newer.get());
    }

    private void assertQuiet(Path javaHome) throws Exception {
        PostgresServer postgres = PostgresServer.shared();
        List<String> backends = List.of("file:" + dir.resolve("file"), "sqlite:" + dir.resolve("sqlite"),
                // a PostgreSQL server just started refuses grants for its restart grace: not what this checks
                postgres.kanukiUri(postgres.createDatabase("quiet_stderr")) + "&restartGrace=0", RedisServer.shared().kanukiUri(),
                MemcachedServer.shared().kanukiUri(), EtcdServer.shared().kanukiUri(), ZooKeeperServer.shared().kanukiUri());
        for (String backend : backends) {
            // A name of its own per run: a server may still be ending the session of the run before.
            String name = "quiet-" + Long.toUnsignedString(System.nanoTime(), 36);
            for (List<String> args : List.of(List.of("run", "-b", backend, "-n", name, "--", "true"),
                    List.of("status", "-b", backend, name))) {
                Launched r = launch(javaHome, args);
                assertEquals(0, r.exitCode, () -> javaHome + " " + args + ": " + r.err);
                List<String> foreign = r.err.lines().filter(l -> !l.startsWith("kanuki: ")).toList();
                assertEquals(List.of(), foreign, () -> javaHome + " " + args + ": not kanuki's own lines on stderr");
            }
        }
    }

    private record Launched(int exitCode, String err) {
    }

    /** Runs the installed launcher (bin/kanuki) on the test class path with the given Java. */
    private Launched launch(Path javaHome, List<String> args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("bash", Path.of("src/main/dist/bin/kanuki").toAbsolutePath().toString()));
        command.addAll(args);
        Path err = Files.createTempFile(dir, "stderr", ".txt");
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(err.toFile());
        builder.environment().put("JAVA_HOME", javaHome.toString());
        builder.environment().put("KANUKI_CLASSPATH", System.getProperty("java.class.path"));
        builder.environment().put("KANUKI_CDS", "off"); // no archive of the test class path in the user's cache
        builder.environment().remove("JAVA_OPTS");
        builder.environment().remove("JDK_JAVA_OPTIONS");
        Process p = builder.start();
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(args + " did not end within 120 s: " + Files.readString(err, StandardCharsets.UTF_8));
        }
        return new Launched(p.exitValue(), Files.readString(err, StandardCharsets.UTF_8));
    }

    /** @return a JDK of version 23 or later: KANUKI_TEST_NEWER_JAVA_HOME, or one under /usr/lib/jvm */
    static Optional<Path> newerJava() throws IOException {
        String set = System.getenv("KANUKI_TEST_NEWER_JAVA_HOME");
        if (set != null && !set.isEmpty()) {
            return Optional.of(Path.of(set));
        }
        Path jvms = Path.of("/usr/lib/jvm");
        if (!Files.isDirectory(jvms)) {
            return Optional.empty();
        }
        try (Stream<Path> homes = Files.list(jvms)) {
            return homes.filter(h -> Files.isExecutable(h.resolve("bin/java")) && feature(h) >= 23).findFirst();
        }
    }

    /** @return the feature version in a JDK's release file, or 0 */
    private static int feature(Path home) {
        try {
            for (String line : Files.readAllLines(home.resolve("release"))) {
                java.util.regex.Matcher m = java.util.regex.Pattern.compile("^JAVA_VERSION=\"(?:1\\.)?(\\d+)").matcher(line);
                if (m.find()) {
                    return Integer.parseInt(m.group(1));
                }
            }
        } catch (IOException | RuntimeException e) {
            return 0; // not a JDK we can read
        }
        return 0;
    }
}
