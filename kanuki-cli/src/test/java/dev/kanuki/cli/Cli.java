package dev.kanuki.cli;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs the {@code kanuki} command in a child JVM on the test class path, the way a user runs it:
 * real process, real exit code, real signals.
 */
final class Cli {
    private static final Duration LIMIT = Duration.ofSeconds(60);
    private static int counter;

    private Cli() {
    }

    /** A finished run. */
    record Result(int exitCode, String out, String err, Duration elapsed) {
        List<String> errLines() {
            return err.lines().toList();
        }
    }

    /** A started run. */
    static final class Running {
        final Process process;
        final Path out;
        final Path err;
        final long started = System.nanoTime();

        Running(Process process, Path out, Path err) {
            this.process = process;
            this.out = out;
            this.err = err;
        }

        Result await() throws IOException, InterruptedException {
            if (!process.waitFor(LIMIT.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new AssertionError("kanuki did not exit within " + LIMIT + "; stderr: "
                        + Files.readString(err, StandardCharsets.UTF_8));
            }
            Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
            return new Result(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8),
                    Files.readString(err, StandardCharsets.UTF_8), elapsed);
        }
    }

    /** Starts {@code kanuki args...} in {@code workDir}; output goes to files there. */
    static Running start(Path workDir, String... args) throws IOException {
        return start(workDir, List.of(), args);
    }

    /** Like {@link #start(Path, String...)}, with options for the JVM (such as {@code -Djava.io.tmpdir=…}). */
    static synchronized Running start(Path workDir, List<String> jvmOptions, String... args) throws IOException {
        int n = counter++;
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-XX:+UseSerialGC");
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(KanukiCli.class.getName());
        command.addAll(List.of(args));
        Path out = workDir.resolve("cli-" + n + ".out");
        Path err = workDir.resolve("cli-" + n + ".err");
        Process process = new ProcessBuilder(command)
                .directory(workDir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(out.toFile())
                .redirectError(err.toFile())
                .start();
        return new Running(process, out, err);
    }

    /** @return the command that starts {@code kanuki} in a child JVM on the test class path, without arguments */
    static List<String> javaCommand() {
        return List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-cp", System.getProperty("java.class.path"),
                KanukiCli.class.getName());
    }

    /**
     * Runs a shell script in {@code workDir}: {@code "$KANUKI"} in it expands to the command that
     * starts kanuki (a JVM on the test class path), so that the script can give kanuki argument
     * bytes Java would not (invalid UTF-8), under the locale variables in {@code env}.
     */
    static Running startShell(Path workDir, java.util.Map<String, String> env, String script) throws IOException {
        int n;
        synchronized (Cli.class) {
            n = counter++;
        }
        Path out = workDir.resolve("cli-" + n + ".out");
        Path err = workDir.resolve("cli-" + n + ".err");
        List<String> java = javaCommand();
        StringBuilder prefix = new StringBuilder("set -- ");
        for (String word : java) {
            prefix.append('\'').append(word.replace("'", "'\\''")).append("' ");
        }
        ProcessBuilder builder = new ProcessBuilder("sh", "-c", prefix + "\n" + script.replace("\"$KANUKI\"", "\"$@\""))
                .directory(workDir.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                .redirectOutput(out.toFile())
                .redirectError(err.toFile());
        builder.environment().remove("LANG");
        builder.environment().remove("LC_ALL");
        builder.environment().remove("LC_CTYPE");
        builder.environment().putAll(env);
        return new Running(builder.start(), out, err);
    }

    /** Runs {@code kanuki args...} in {@code workDir} and waits for it. */
    static Result run(Path workDir, String... args) throws IOException, InterruptedException {
        return start(workDir, args).await();
    }
}
