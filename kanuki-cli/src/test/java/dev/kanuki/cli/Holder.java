package dev.kanuki.cli;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A {@code kanuki run -b URI NAME -- sh -c 'touch MARKER; exec sleep 30'} child: a real process
 * that holds a lock until it is stopped or killed. Its pid is the one in the lock's owner record.
 */
final class Holder {
    private static final Duration START_LIMIT = Duration.ofSeconds(30);
    private static int counter;

    final Cli.Running run;
    private final Path marker;

    private Holder(Cli.Running run, Path marker) {
        this.run = run;
        this.marker = marker;
    }

    /**
     * Starts a holder of {@code name}; {@link #awaitHolding} waits until it holds the lock.
     *
     * @param runOptions more options for {@code kanuki run}, such as {@code -n}
     */
    static synchronized Holder start(Path dir, String backend, String name, String... runOptions) throws IOException {
        Path marker = dir.resolve("holding-" + counter++);
        List<String> args = new ArrayList<>(List.of("run", "-b", backend));
        args.addAll(List.of(runOptions));
        args.addAll(List.of(name, "--", "sh", "-c", "touch \"$0\"; exec sleep 30", marker.toString()));
        return new Holder(Cli.start(dir, args.toArray(String[]::new)), marker);
    }

    /** @return the holder's pid, once its command runs (so it holds the lock) */
    long awaitHolding() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + START_LIMIT.toNanos();
        while (!Files.exists(marker)) {
            if (!run.process.isAlive()) {
                throw new AssertionError("the holder exited with " + run.process.exitValue() + ": "
                        + Files.readString(run.err, StandardCharsets.UTF_8));
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the holder did not get its lock within " + START_LIMIT);
            }
            Thread.sleep(20);
        }
        return pid();
    }

    long pid() {
        return run.process.pid();
    }

    /** @return whether the holder has started its command (without waiting) */
    boolean isHolding() {
        return Files.exists(marker);
    }

    /** SIGKILLs the holder (it leaves its lock behind) and its command; waits until both are gone. */
    void kill() throws InterruptedException {
        List<ProcessHandle> command = run.process.descendants().toList();
        run.process.destroyForcibly(); // SIGKILL: no shutdown hook, no release
        if (!run.process.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionError("pid " + pid() + " survived SIGKILL");
        }
        command.forEach(ProcessHandle::destroyForcibly);
    }

    /** SIGTERMs the holder, which passes it on to its command and releases the lock; waits for it. */
    Cli.Result stop() throws IOException, InterruptedException {
        run.process.destroy();
        return run.await();
    }

    /** @return what the holder has written to standard error so far */
    String err() throws IOException {
        return Files.readString(run.err, StandardCharsets.UTF_8);
    }
}
