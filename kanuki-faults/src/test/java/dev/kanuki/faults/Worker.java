package dev.kanuki.faults;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A {@link FaultWorker} process seen from the referee: its lines, signals, and its end. */
final class Worker implements AutoCloseable {
    private final Process process;
    private final PrintWriter in;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    /** Every line read so far, also those an {@link #await} for something else passed over. */
    private final java.util.Set<String> seen = java.util.concurrent.ConcurrentHashMap.newKeySet();

    private Worker(Process process) {
        this.process = process;
        this.in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the process ended
            }
            lines.add("EOF");
        }, "fault-worker-reader");
        reader.setDaemon(true);
        reader.start();
    }

    static Worker start(String uri, String name, Path fenceDb, Path errorLog) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder = new ProcessBuilder(List.of(java, "-cp", System.getProperty("java.class.path"),
                FaultWorker.class.getName(), uri, name, fenceDb.toString()));
        builder.redirectError(ProcessBuilder.Redirect.appendTo(errorLog.toFile()));
        return new Worker(builder.start());
    }

    /** @return the next line that starts with one of {@code prefixes}, or null when none came in time */
    String await(Duration within, String... prefixes) throws InterruptedException {
        return await(within, false, prefixes);
    }

    /** Like {@link #await(Duration, String...)}, but also true for a line that went by earlier. */
    boolean saw(Duration within, String line) throws InterruptedException {
        return seen.contains(line) || await(within, true, line) != null;
    }

    private String await(Duration within, boolean unused, String... prefixes) throws InterruptedException {
        long deadline = System.nanoTime() + within.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left <= 0 ? null : lines.poll(left, TimeUnit.NANOSECONDS);
            if (line == null || line.equals("EOF")) {
                return null;
            }
            seen.add(line);
            for (String p : prefixes) {
                if (line.startsWith(p)) {
                    return line;
                }
            }
        }
    }

    /** @return the token once the worker holds the lock, or -1 when it did not within {@code within} */
    long awaitHeld(Duration within) throws InterruptedException {
        String line = await(within, "HELD ");
        return line == null ? -1 : Long.parseLong(line.substring(5).trim());
    }

    /** @return WROTE or REFUSED, or null when the worker did not answer */
    String write(String value, Duration within) throws InterruptedException {
        in.println("write " + value);
        return await(within, "WROTE", "REFUSED");
    }

    void signal(String name) throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start().waitFor(10, TimeUnit.SECONDS);
    }

    void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    @Override
    public void close() throws InterruptedException {
        try {
            signal("CONT");
        } catch (IOException e) {
            // gone
        }
        in.println("release");
        in.close();
        if (!process.waitFor(2, TimeUnit.SECONDS)) {
            kill(); // still waiting for the lock: nothing to release
        }
    }
}
