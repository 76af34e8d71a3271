package dev.kanuki.smoke;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.testkit.PostgresServer;
import dev.kanuki.testkit.RedisServer;
import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A small modular application ({@code src/app}: {@code module app { requires dev.kanuki.core; }})
 * compiled against the packaged jars and run as {@code java --module-path ... -m app/app.Main},
 * without a class path, locks on {@code file:}, {@code redis://} and {@code postgresql://}: the
 * backends are found as services of named modules, and their dependencies are in the module graph.
 */
@Tag("servers")
@Tag("slow")
class ModularApplicationTest {
    /** Generous: a JVM start and three servers' first connections on a loaded machine. */
    private static final long RUN_LIMIT_SECONDS = 300;

    @Test
    void aModularApplicationLocksOnFileRedisAndPostgresql(@TempDir Path dir) throws IOException, InterruptedException {
        String redis = RedisServer.shared().kanukiUri();
        PostgresServer postgres = PostgresServer.shared();
        String postgresql = postgres.kanukiUri(postgres.createDatabase("modular_smoke"));
        Path locks = Files.createDirectory(dir.resolve("locks"));
        Path application = compileApplication(dir.resolve("app"));

        Run run = java(dir, "--module-path", application + File.pathSeparator + SmokeBuild.modulePath(),
                "-m", "app/app.Main", "file:" + locks, redis, postgresql);

        assertEquals(0, run.status(), "the application failed:\n" + run.output());
        List<String> steps = run.output().lines()
                .filter(line -> line.startsWith("acquired ") || line.startsWith("released ") || line.startsWith("module "))
                .toList();
        assertEquals(List.of(
                "acquired file", "released file",
                "acquired redis", "released redis",
                "acquired postgresql", "released postgresql",
                "module dev.kanuki.core explicit",
                "module dev.kanuki.file explicit",
                "module dev.kanuki.jdbc explicit",
                "module dev.kanuki.redis explicit"), steps, run.output());
    }

    /** @return the application's classes, an exploded module, compiled on the module path of the packaged jars */
    private static Path compileApplication(Path classes) throws IOException {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        assertNotNull(javac, "no Java compiler in this JDK");
        List<Path> sources;
        try (Stream<Path> files = Files.walk(SmokeBuild.applicationSources())) {
            sources = files.filter(f -> f.toString().endsWith(".java")).toList();
        }
        StringWriter diagnostics = new StringWriter();
        try (StandardJavaFileManager files = javac.getStandardFileManager(null, null, StandardCharsets.UTF_8)) {
            boolean compiled = javac.getTask(diagnostics, files, null,
                    List.of("--release", "17", "-Xlint:all", "-Werror",
                            "--module-path", SmokeBuild.modulePath().toString(), "-d", classes.toString()),
                    null, files.getJavaFileObjectsFromPaths(sources)).call();
            assertTrue(compiled, "the application does not compile:\n" + diagnostics);
        }
        return classes;
    }

    /** Runs the JDK's {@code java} with these arguments and no class path; its output goes to a file in {@code dir}. */
    private static Run java(Path dir, String... arguments) throws IOException, InterruptedException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Path output = dir.resolve("app.out");
        ProcessBuilder builder = new ProcessBuilder(Stream.concat(Stream.of(java.toString()), Stream.of(arguments)).toList())
                .redirectErrorStream(true)
                .redirectOutput(output.toFile());
        builder.environment().remove("CLASSPATH"); // java would take it as the class path
        Process process = builder.start();
        if (!process.waitFor(RUN_LIMIT_SECONDS, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
            throw new AssertionError("the application did not end within " + RUN_LIMIT_SECONDS + " s:\n"
                    + Files.readString(output));
        }
        return new Run(process.exitValue(), Files.readString(output));
    }

    private record Run(int status, String output) {
    }
}
