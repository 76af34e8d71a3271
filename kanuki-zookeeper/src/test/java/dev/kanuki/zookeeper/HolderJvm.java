package dev.kanuki.zookeeper;

import dev.kanuki.contract.LockHolderMain;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A {@link LockHolderMain} in its own JVM that may have to wait: unlike the contract's
 * {@code HolderProcess}, starting it does not wait until it holds, so several can queue.
 */
final class HolderJvm implements AutoCloseable {
    private final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private volatile Long token;

    private HolderJvm(Process process) {
        this.process = process;
        Thread reader = new Thread(this::readLines, "holder-jvm-" + process.pid());
        reader.setDaemon(true);
        reader.start();
    }

    static HolderJvm start(String uri, String name, String mode, Path errorLog) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder = new ProcessBuilder(List.of(java, "-cp", System.getProperty("java.class.path"),
                LockHolderMain.class.getName(), uri, name, mode));
        builder.redirectError(errorLog.toFile());
        return new HolderJvm(builder.start());
    }

    private void readLines() {
        try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                if (line.startsWith("HELD ")) {
                    token = Long.parseLong(line.substring(5).trim());
                }
                lines.add(line);
            }
        } catch (IOException e) {
            lines.add("ERROR " + e);
        }
    }

    /** @return whether it has reported holding the lock */
    boolean held() {
        return token != null;
    }

    /** @return its fencing token, once it holds */
    long awaitHeld(Duration within) throws InterruptedException {
        String line = lines.poll(within.toMillis(), TimeUnit.MILLISECONDS);
        if (line == null || !line.startsWith("HELD ")) {
            throw new AssertionError("the holder JVM did not report holding (" + line + ")");
        }
        return token;
    }

    /** Asks it to release (closes its stdin) and waits until it has. */
    void release() throws IOException, InterruptedException {
        process.getOutputStream().close();
        String line = lines.poll(30, TimeUnit.SECONDS);
        if (!"RELEASED".equals(line)) {
            throw new AssertionError("the holder JVM did not release (" + line + ")");
        }
    }

    /** Kills it with SIGKILL, as a crash would. */
    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }
}
