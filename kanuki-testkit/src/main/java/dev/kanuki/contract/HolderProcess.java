package dev.kanuki.contract;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A {@link LockHolderMain} running in its own JVM: a real second process that holds a lock,
 * for cross-process and crash tests.
 */
public final class HolderProcess implements AutoCloseable {
    private final Process process;
    private final BufferedReader out;
    private final long token;

    private HolderProcess(Process process, BufferedReader out, long token) {
        this.process = process;
        this.out = out;
        this.token = token;
    }

    /**
     * Starts a holder and waits until it holds the lock.
     *
     * @param uri backend URI
     * @param name lock name
     * @param mode {@code exclusive}, {@code shared} or {@code permit:N}
     * @param errorLog where the child's stderr goes
     * @return the running holder
     * @throws IOException when the process cannot start or never reports holding the lock
     */
    public static HolderProcess start(String uri, String name, String mode, Path errorLog) throws IOException {
        return start(uri, name, mode, errorLog, List.of());
    }

    /**
     * Like {@link #start(String, String, String, Path)}, with extra arguments for
     * {@link LockHolderMain} (e.g. {@code exit}).
     *
     * @param uri the backend's URI
     * @param name the lock to hold
     * @param mode how to hold it, as {@link LockHolderMain} reads it
     * @param errorLog where the process's standard error goes
     * @param extra further arguments for {@link LockHolderMain}
     * @return the process, once it reported holding the lock
     * @throws IOException when the process cannot start or never reports holding the lock
     */
    public static HolderProcess start(String uri, String name, String mode, Path errorLog, List<String> extra)
            throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new java.util.ArrayList<>(List.of(java, "-cp", System.getProperty("java.class.path"),
                LockHolderMain.class.getName(), uri, name, mode));
        command.addAll(extra);
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.redirectError(errorLog.toFile());
        Process process = builder.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                return null;
            }
        });
        String first;
        try {
            first = line.get(60, TimeUnit.SECONDS);
        } catch (Exception e) {
            process.destroyForcibly();
            throw new IOException("holder process did not report holding '" + name + "' within 60s; stderr in " + errorLog, e);
        }
        if (first == null || !first.startsWith("HELD ")) {
            process.destroyForcibly();
            throw new IOException("holder process failed (" + first + "); stderr: " + readQuietly(errorLog));
        }
        return new HolderProcess(process, out, Long.parseLong(first.substring(5).trim()));
    }

    private static String readQuietly(Path file) {
        try {
            return java.nio.file.Files.readString(file);
        } catch (IOException e) {
            return "(unreadable)";
        }
    }

    /** {@return the fencing token the holder got} */
    public long token() {
        return token;
    }

    /** {@return the holder's pid} */
    public long pid() {
        return process.pid();
    }

    /**
     * Waits for the holder to exit by itself, at most 30 s; then kills it.
     *
     * @return the process's exit code, or -1 when it had to be killed
     * @throws InterruptedException when this thread is interrupted while waiting
     */
    public int waitForExit() throws InterruptedException {
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            return -1;
        }
        return process.exitValue();
    }

    /**
     * Kills the holder with SIGKILL, as a crash would, and waits for it to die.
     *
     * @throws InterruptedException when this thread is interrupted while waiting
     */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** Asks the holder to release (closes its stdin) and waits for it to exit. */
    @Override
    public void close() throws IOException, InterruptedException {
        if (process.isAlive()) {
            process.getOutputStream().close();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
        out.close();
    }
}
