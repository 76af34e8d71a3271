package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.contract.LockHolderMain;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * A holder frozen (SIGSTOP) at each step of a ttl or queue lock, with whatever the step holds
 * still held ({@link PauseForTests}): another process gets the lock within the lease plus the
 * documented bound, and the frozen process, resumed, neither takes the lock nor takes it away
 * from its new holder. Before: a holder frozen inside renewal held the breaker lock, which
 * another process could clear only after 10 s whatever the lease; one frozen inside breaking a
 * stale entry the same.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
@Tag("slow")
class FrozenHolderTest {
    private static final String NAME = "frozen";
    private static final Duration LEASE = Duration.ofMillis(2000);
    /**
     * Lease + breaker bound (2 s + 1 s) with generous slack for a loaded machine; below the old
     * code's 10 s breaker, which is what this guards.
     */
    private static final Duration WITHIN = Duration.ofMillis(9000);
    private static final Duration START = Duration.ofSeconds(90);

    @TempDir
    Path tempDir;
    private final List<Process> children = new ArrayList<>();

    static Stream<Arguments> cases() {
        List<Arguments> cases = new ArrayList<>();
        for (String strategy : List.of("mkdir", "symlink", "rename", "create", "queue")) {
            for (String step : List.of("acquire", "renew", "release", "break")) {
                if (!(strategy.equals("queue") && step.equals("break"))) { // queue breaks nothing: stale lines are skipped
                    cases.add(Arguments.of(strategy, step));
                }
            }
        }
        return cases.stream();
    }

    @AfterEach
    void killChildren() throws Exception {
        for (Process p : children) {
            signal(p, "CONT");
            p.destroyForcibly();
            p.waitFor(10, TimeUnit.SECONDS);
        }
    }

    @ParameterizedTest(name = "{0} frozen inside {1}")
    @MethodSource("cases")
    void aHolderFrozenInsideAStepDoesNotKeepOthersOutBeyondTheLeaseAndNeverTakesTheLockBack(String strategy, String step)
            throws Exception {
        Path dir = Files.createDirectories(tempDir.resolve("locks"));
        String uri = "file:" + dir + "?strategy=" + strategy + "&lease=" + LEASE.toMillis() + "ms";
        Path marker = tempDir.resolve("paused");
        if (step.equals("break")) {
            // A stale entry to break: its holder killed (its pid gone, so stale at once).
            Child dead = child(uri, null, marker);
            dead.awaitHeld();
            dead.process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
        }
        Child frozen = child(uri, step, marker);
        if (step.equals("release")) {
            frozen.awaitHeld();
            frozen.process.getOutputStream().close(); // release
        }
        Awaitility.await("the child reaching " + step).atMost(START).pollInterval(Duration.ofMillis(20))
                .until(() -> Files.exists(marker) || !frozen.process.isAlive());
        assertTrue(frozen.process.isAlive(), "the child ended before reaching " + step);
        signal(frozen.process, "STOP");
        long stopped = System.nanoTime();
        try (LockProvider provider = LockProvider.open(uri)) {
            LockHandle mine = provider.lock(NAME).acquire(Duration.ofSeconds(60));
            long tookMs = (System.nanoTime() - stopped) / 1_000_000;
            assertTrue(tookMs < WITHIN.toMillis(), "a holder frozen inside " + step + " kept the lock for " + tookMs
                    + " ms (lease " + LEASE.toMillis() + " ms)");

            signal(frozen.process, "CONT");
            Files.delete(marker);
            Path resumed = marker.resolveSibling("paused.resumed");
            Awaitility.await("the child resuming").atMost(START).until(() -> Files.exists(resumed));
            if (step.equals("release")) {
                // It finishes its release and exits: what it removed is done by then.
                assertTrue(frozen.process.waitFor(60, TimeUnit.SECONDS), "the resumed child did not finish its release");
            } else {
                // Whatever the resumed step does (take the lock, remove our entry, extend its lease
                // over ours) shows within moments; two lease periods without it is the verdict.
                // (Frozen inside renew it held the lock already: what matters is that ours stays.)
                boolean heldBefore = step.equals("renew");
                Awaitility.await().during(LEASE.multipliedBy(2)).atMost(LEASE.multipliedBy(10))
                        .until(() -> (heldBefore || !frozen.held()) && mine.isHeld());
            }
            LockStatus status = provider.status(NAME);
            assertEquals(LockStatus.State.HELD, status.state(), "after the frozen child resumed: " + status);
            assertEquals(ProcessHandle.current().pid(), status.owner().orElseThrow().pid(),
                    "after the frozen child resumed the lock shows another owner: " + status);
            mine.verify();
            mine.close();
        }
        if (step.equals("acquire") || step.equals("break")) {
            frozen.awaitHeld(); // it waited its turn, and gets the lock once we let it go
        }
    }

    private static void signal(Process p, String signal) throws IOException, InterruptedException {
        if (p.isAlive()) {
            new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start().waitFor(10, TimeUnit.SECONDS);
        }
    }

    /** A {@link LockHolderMain} in its own JVM, frozen at {@code step} when not null. */
    private Child child(String uri, String step, Path marker) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> command = new ArrayList<>(List.of(java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        if (step != null) {
            command.add("-Dkanuki.file.pauseAt=" + step);
            command.add("-Dkanuki.file.pauseMarker=" + marker);
        }
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), LockHolderMain.class.getName(), uri, NAME,
                "exclusive"));
        Process process = new ProcessBuilder(command)
                .redirectError(tempDir.resolve("child-" + children.size() + ".err").toFile()).start();
        children.add(process);
        return new Child(process);
    }

    /** A child and the lines it printed. */
    private static final class Child {
        final Process process;
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        volatile boolean held;

        Child(Process process) {
            this.process = process;
            Thread reader = new Thread(() -> {
                try (BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    for (String line = out.readLine(); line != null; line = out.readLine()) {
                        if (line.startsWith("HELD ")) {
                            held = true;
                        }
                        lines.add(line);
                    }
                } catch (IOException e) {
                    // ended
                }
            }, "frozen-child-reader");
            reader.setDaemon(true);
            reader.start();
        }

        boolean held() {
            return held;
        }

        void awaitHeld() {
            Awaitility.await("the child holding the lock").atMost(START).until(() -> held || !process.isAlive());
            assertTrue(held, "the child did not get the lock; it printed " + lines);
        }
    }
}
