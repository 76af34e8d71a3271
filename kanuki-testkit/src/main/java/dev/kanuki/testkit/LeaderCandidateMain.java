package dev.kanuki.testkit;

import dev.kanuki.LeaderCandidate;
import dev.kanuki.LeaderElection;
import dev.kanuki.Leadership;
import dev.kanuki.LockProvider;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A candidate of {@link ElectionHarness}, in its own JVM: {@code URI NAME OWN_LOG SHARED_LOG}.
 * It joins the election {@code NAME} on the backend {@code URI} (whose module must be on the
 * class path). On election it writes {@code elected EPOCH MILLIS} (the wall clock, to time the
 * takeover from the test's kill on the same host) to its own log, and
 * {@code elected PID EPOCH} to the shared log; while it leads, {@code tick PID EPOCH} to the
 * shared log every 20 ms, each after checking that its term is current (as a leader's work would
 * before each step). When its term ends it writes {@code revoked EPOCH REASON} to its own log.
 * Every line is one {@code write} in append mode, so lines of different processes never mix and a
 * SIGKILL loses none that was written. Prints {@code READY} once it stands.
 */
public final class LeaderCandidateMain {
    private LeaderCandidateMain() {
    }

    /**
     * Runs the candidate until it is killed.
     *
     * @param args the backend's URI, the election's name, this candidate's own log, the shared log
     * @throws Exception when the provider cannot be opened (the exit code is then non-zero)
     */
    public static void main(String[] args) throws Exception {
        String uri = args[0];
        String name = args[1];
        Path own = Path.of(args[2]);
        Path shared = Path.of(args[3]);
        long pid = ProcessHandle.current().pid();
        LockProvider provider = LockProvider.open(uri);
        LeaderElection.join(provider, name, new LeaderCandidate() {
            @Override
            public void elected(Leadership term) {
                append(shared, "elected " + pid + " " + term.epoch());
                append(own, "elected " + term.epoch() + " " + System.currentTimeMillis());
                // elected() must return at once: the election notices a loss only after it did
                Thread ticker = new Thread(() -> {
                    while (term.isCurrent()) {
                        append(shared, "tick " + pid + " " + term.epoch());
                        try {
                            Thread.sleep(20);
                        } catch (InterruptedException e) {
                            return;
                        }
                    }
                }, "ticker");
                ticker.setDaemon(true);
                ticker.start();
            }

            @Override
            public void revoked(Leadership term, Leadership.End why) {
                append(own, "revoked " + term.epoch() + " " + why);
            }
        });
        System.out.println("READY");
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE); // until killed: the test ends candidates only with SIGKILL
    }

    private static void append(Path file, String line) {
        try {
            Files.write(file, (line + "\n").getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
