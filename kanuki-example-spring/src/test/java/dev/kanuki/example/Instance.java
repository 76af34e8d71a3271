package dev.kanuki.example;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * One instance of the example application in a JVM of its own ({@link ChildMain} on this test
 * JVM's class path), on a free port ({@code server.port=0}, read back from its port file), with
 * its output in {@code NAME.log} and its temporary files in its own directory under the test's.
 */
final class Instance implements AutoCloseable {
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();
    static final ObjectMapper JSON = new ObjectMapper();
    /** Generous: two Spring Boot JVMs start at once on a loaded two-core machine. */
    static final Duration START_TIMEOUT = Duration.ofSeconds(150);

    final String name;
    final Process process;
    final Path log;
    private final Path portFile;
    private volatile int port;

    private Instance(String name, Process process, Path log, Path portFile) {
        this.name = name;
        this.process = process;
        this.log = log;
        this.portFile = portFile;
    }

    /**
     * Starts an instance; {@link #awaitUp()} waits for it.
     *
     * @param dir the test's directory (the instance's files go in it)
     * @param name the instance's name (its log is {@code dir/NAME.log})
     * @param env environment variables to set
     * @param args Spring Boot arguments, e.g. {@code --kanuki.uri=...}
     */
    static Instance start(Path dir, String name, Map<String, String> env, String... args) throws IOException {
        Path tmp = Files.createDirectories(dir.resolve(name + "-tmp"));
        Path log = dir.resolve(name + ".log");
        Path portFile = dir.resolve(name + ".port");
        List<String> command = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                // quicker start and a smaller footprint; Tomcat's work directories land in the test's directory
                "-Xshare:auto", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m",
                "-Djava.io.tmpdir=" + tmp,
                "-cp", System.getProperty("java.class.path"),
                ChildMain.class.getName(),
                "--server.port=0",
                "--server.address=127.0.0.1",
                "--example.port-file=" + portFile));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().putAll(env);
        Process process = builder.start(); // its standard input stays open: ChildMain exits when it closes
        return new Instance(name, process, log, portFile);
    }

    /** Waits until the instance answers {@code /actuator/health} with UP; fails at once if its JVM ended. */
    Instance awaitUp() {
        await("instance " + name + " up").atMost(START_TIMEOUT).pollInterval(Duration.ofMillis(250))
                .ignoreExceptionsMatching(e -> e instanceof IOException || e instanceof UncheckedIOException)
                .until(() -> {
                    if (!process.isAlive()) {
                        throw new AssertionError("instance " + name + " exited with " + process.exitValue() + ":\n" + tail());
                    }
                    if (port == 0) {
                        if (!Files.exists(portFile)) {
                            return false;
                        }
                        port = Integer.parseInt(Files.readString(portFile).trim());
                    }
                    HttpResponse<String> health = get("/actuator/health");
                    return health.statusCode() == 200 && "UP".equals(JSON.readTree(health.body()).path("status").asText());
                });
        return this;
    }

    URI uri(String path) {
        return URI.create("http://127.0.0.1:" + port + path);
    }

    HttpResponse<String> get(String path) throws IOException {
        HttpRequest request = HttpRequest.newBuilder(uri(path)).timeout(Duration.ofSeconds(60)).GET().build();
        try {
            return HTTP.send(request, HttpResponse.BodyHandlers.ofString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        }
    }

    /** {@return the JSON of a GET that must answer 200} */
    JsonNode getJson(String path) throws IOException {
        HttpResponse<String> response = get(path);
        if (response.statusCode() != 200) {
            throw new AssertionError("GET " + path + " on " + name + ": " + response.statusCode() + " " + response.body());
        }
        return JSON.readTree(response.body());
    }

    /** Sends {@code POST /orders} with the idempotency key, without waiting for the answer. */
    CompletableFuture<HttpResponse<String>> postOrder(String key) {
        HttpRequest request = HttpRequest.newBuilder(uri("/orders")).timeout(Duration.ofSeconds(120))
                .header("Idempotency-Key", key).POST(HttpRequest.BodyPublishers.noBody()).build();
        return HTTP.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    long pid() {
        return process.pid();
    }

    /** Kills the JVM with SIGKILL (no shutdown hook: its locks are not released) and waits for it to end. */
    void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            throw new AssertionError("instance " + name + " (pid " + pid() + ") did not die");
        }
    }

    /** {@return the last lines of the instance's output, for failure messages} */
    String tail() {
        try {
            List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
        } catch (IOException | UncheckedIOException e) {
            return "(no output: " + e + ")";
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }

    @Override
    public String toString() {
        return name + " (pid " + pid() + ", port " + port + ")";
    }
}
