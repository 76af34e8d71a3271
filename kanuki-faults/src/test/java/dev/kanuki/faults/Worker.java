package dev.kanuki.faults;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A {@link FaultWorker} process seen from the referee: its state, its answers, signals, its end. */
final class Worker implements AutoCloseable {
    private final Process process;
    private final PrintWriter in;
    private final Trial trial;
    private final BlockingQueue<String> answers = new LinkedBlockingQueue<>();
    private volatile boolean acquiring;
    private volatile long token = -1;
    private volatile boolean lost;
    private volatile String failed;
    private volatile boolean ended;
    private volatile String paused;

    private Worker(Process process, Trial trial) {
        this.process = process;
        this.trial = trial;
        this.in = new PrintWriter(process.getOutputStream(), true, StandardCharsets.UTF_8);
        Thread reader = new Thread(() -> {
            try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                for (String line = out.readLine(); line != null; line = out.readLine()) {
                    if (line.equals("ACQUIRING")) {
                        acquiring = true;
                    } else if (line.startsWith("HELD ")) {
                        token = Long.parseLong(line.substring(5).trim());
                    } else if (line.equals("LOST")) {
                        lost = true;
                    } else if (line.startsWith("PAUSED ")) {
                        paused = line.substring(7).trim();
                    } else if (line.startsWith("FAILED")) {
                        failed = line;
                    } else {
                        answers.add(line);
                    }
                }
            } catch (IOException e) {
                // the process ended
            }
            ended = true;
            answers.add("EOF");
        }, "fault-worker-reader");
        reader.setDaemon(true);
        reader.start();
    }

    static Worker start(Trial trial, String uri, List<String> prefix, Path errorLog) throws IOException {
        return start(trial, uri, prefix, List.of(), errorLog);
    }

    /** @param jvmOptions options for the worker's JVM (e.g. {@code -Dkanuki.file.pauseAt=renew}) */
    static Worker start(Trial trial, String uri, List<String> prefix, List<String> jvmOptions, Path errorLog)
            throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(prefix);
        command.addAll(List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto"));
        command.addAll(jvmOptions);
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), FaultWorker.class.getName(),
                uri, trial.name(), trial.fence().toString(), trial.log().toString()));
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.redirectError(ProcessBuilder.Redirect.appendTo(errorLog.toFile()));
        return new Worker(builder.start(), trial);
    }

    /** Starts a {@link CrowdWorker} in {@code mode} ({@code hold} or {@code wait}). */
    static Worker startCrowd(Trial trial, String uri, String mode, Path errorLog) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder = new ProcessBuilder(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xshare:auto",
                "-cp", System.getProperty("java.class.path"), CrowdWorker.class.getName(),
                uri, trial.name(), mode, trial.log().toString());
        builder.redirectError(ProcessBuilder.Redirect.appendTo(errorLog.toFile()));
        return new Worker(builder.start(), trial);
    }

    /** Sends {@code command} (or nothing when null). @return the first answer starting with {@code prefix}, or null */
    String ask(String command, String prefix, Duration within) throws InterruptedException {
        if (command != null) {
            in.println(command);
        }
        long deadline = System.nanoTime() + within.toNanos();
        for (String line = answer(within); line != null; line = answer(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())))) {
            if (line.startsWith(prefix)) {
                return line;
            }
        }
        return null;
    }

    long pid() {
        return process.pid();
    }

    boolean acquiring() {
        return acquiring;
    }

    /** @return the fencing token once the worker holds the lock, else -1 */
    long token() {
        return token;
    }

    boolean holds() {
        return token >= 0;
    }

    /** @return true once its handle reported the lock lost */
    boolean lost() {
        return lost;
    }

    /** @return the phase a pausing worker said it reached ({@link PausingBackend}), or null */
    String paused() {
        return paused;
    }

    /** @return the FAILED line when its acquisition threw, else null */
    String failed() {
        return failed;
    }

    boolean ended() {
        return ended || !process.isAlive();
    }

    /** Fenced counter: read, add one, write with its token. @return INC n, REFUSED, or null (no answer) */
    String inc(Duration within) throws InterruptedException {
        answers.clear();
        in.println("inc");
        String answer = answer(within);
        if (answer != null && answer.startsWith("INC ")) {
            trial.accepted();
        } else if (answer == null) {
            trial.unanswered();
        }
        return answer;
    }

    /** Opens and closes another channel to {@code file} inside the worker's JVM. */
    String channel(Path file, Duration within) throws InterruptedException {
        answers.clear();
        in.println("channel " + file);
        return answer(within);
    }

    private String answer(Duration within) throws InterruptedException {
        String line = answers.poll(within.toMillis(), TimeUnit.MILLISECONDS);
        return line == null || line.equals("EOF") ? null : line;
    }

    /** Asks it to release; returns once it said so (or ended). */
    boolean release(Duration within) throws InterruptedException {
        in.println("release");
        long deadline = System.nanoTime() + within.toNanos();
        for (String line = answer(within); line != null; line = answer(Duration.ofNanos(Math.max(1, deadline - System.nanoTime())))) {
            if (line.equals("RELEASED")) {
                return true;
            }
        }
        return ended();
    }

    /** Asks it to release without waiting, and to keep its provider open afterwards. */
    void releaseAndStay() {
        in.println("release-stay");
    }

    /** Asks it to release, without waiting. */
    void releaseAsync() {
        in.println("release");
    }

    void signal(String name) throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-" + name, Long.toString(process.pid())).start().waitFor(10, TimeUnit.SECONDS);
    }

    /** SIGKILL, recorded in the referee log: a holder's critical section ends here. */
    void kill() throws InterruptedException {
        if (process.isAlive()) {
            trial.killed(pid());
        }
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
        if (process.isAlive()) {
            in.println("release");
            in.close();
            if (!process.waitFor(holds() ? 10 : 1, TimeUnit.SECONDS)) {
                kill(); // still waiting for the lock: nothing to release
            }
        }
    }
}
