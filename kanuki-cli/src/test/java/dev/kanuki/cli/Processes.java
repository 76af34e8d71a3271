package dev.kanuki.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** Small helpers for tests that watch real processes and send them real signals. */
final class Processes {
    private static final Duration LIMIT = Duration.ofSeconds(60);

    private Processes() {
    }

    /** @return true when the process exists and is not a zombie (orphans may stay zombies here) */
    static boolean alive(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc/" + pid + "/stat"), StandardCharsets.US_ASCII);
            return stat.charAt(stat.lastIndexOf(')') + 2) != 'Z';
        } catch (IOException e) {
            return false;
        }
    }

    /** @return the pid written (as by {@code echo $$ > file}) in a file, once it is there */
    static long pidIn(Path file) throws InterruptedException {
        await(() -> readQuietly(file).endsWith("\n"), () -> file + " was not written");
        return Long.parseLong(readQuietly(file).trim());
    }

    /** Sends a signal with kill(1); {@code target} may be {@code -PGID}. */
    static void kill(String signal, String target) throws IOException, InterruptedException {
        Process kill = new ProcessBuilder("kill", "-s", signal, "--", target).inheritIO().start();
        if (!kill.waitFor(30, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new AssertionError("kill -s " + signal + " -- " + target + " failed");
        }
    }

    /** Polls a condition every 20 ms for up to a minute. */
    static void await(BooleanSupplier condition, Supplier<String> failure) throws InterruptedException {
        long deadline = System.nanoTime() + LIMIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(failure.get() + " (waited " + LIMIT.toSeconds() + "s)");
            }
            Thread.sleep(20);
        }
    }

    /** @return the lines of a file, or none while it does not exist */
    static List<String> lines(Path file) {
        return readQuietly(file).lines().toList();
    }

    static String readQuietly(Path file) {
        try {
            return Files.readString(file, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    /** @return whether a program is on the PATH (tests that need it are skipped without it) */
    static boolean onPath(String program) {
        String path = System.getenv("PATH");
        for (String dir : (path == null ? "/usr/bin:/bin" : path).split(":")) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, program))) {
                return true;
            }
        }
        return false;
    }
}
