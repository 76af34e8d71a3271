package dev.kanuki.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Leader election across JVMs ({@link LeaderCandidateMain}), on a ttl strategy ({@code mkdir})
 * and the session strategy ({@code os}): three candidates; the leader is killed with SIGKILL three
 * times (each time a new candidate joins, so that three stand); each time another candidate is
 * elected, with an epoch above the last leader's. The shared log, where every leader writes its
 * election and, while its term is current, a tick every 20 ms, shows one leader at a time: its
 * epochs never go down (a deposed leader still at work after the next was elected would write a
 * lower one) and each epoch is one process's.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LeaderElectionProcessTest {
    private static final int CANDIDATES = 3;
    private static final int KILLS = 3;

    @TempDir
    Path tempDir;

    /** A candidate JVM and its own log. */
    private record Candidate(Process process, Path log) {
        /** {@return the highest epoch it logged being elected with, or -1} */
        long lastElected() throws IOException {
            long last = -1;
            if (Files.exists(log)) {
                for (String line : Files.readAllLines(log)) {
                    if (line.startsWith("elected ")) {
                        last = Math.max(last, Long.parseLong(line.substring(8).trim()));
                    }
                }
            }
            return last;
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"mkdir", "os"})
    void killedLeadersAreReplacedWithRisingEpochsAndNeverOverlap(String strategy) throws Exception {
        String uri = "file:" + tempDir.resolve("locks") + "?strategy=" + strategy + "&lease=5s";
        Path shared = tempDir.resolve("shared.log");
        List<Candidate> alive = new ArrayList<>();
        List<Process> all = new ArrayList<>();
        try {
            for (int i = 0; i < CANDIDATES; i++) {
                alive.add(start(uri, i, shared, all));
            }
            long epoch = -1;
            Candidate leader = awaitNewLeader(alive, epoch);
            epoch = leader.lastElected();
            for (int kill = 0; kill < KILLS; kill++) {
                leader.process().destroyForcibly(); // SIGKILL: no release, no revoked()
                assertTrue(leader.process().waitFor(60, TimeUnit.SECONDS), "the killed leader did not die");
                alive.remove(leader);
                alive.add(start(uri, CANDIDATES + kill, shared, all));
                Candidate next = awaitNewLeader(alive, epoch);
                long nextEpoch = next.lastElected();
                assertTrue(nextEpoch > epoch, "epoch " + nextEpoch + " after " + epoch);
                leader = next;
                epoch = nextEpoch;
            }
        } finally {
            for (Process p : all) {
                p.destroyForcibly();
                p.waitFor(60, TimeUnit.SECONDS);
            }
        }
        checkOneLeaderAtATime(Files.readAllLines(shared), KILLS + 1);
    }

    /** Epochs in the shared log never go down, each belongs to one process, and there were {@code terms} of them. */
    private static void checkOneLeaderAtATime(List<String> lines, int terms) {
        long last = -1;
        Map<Long, String> pidOfEpoch = new HashMap<>();
        int elections = 0;
        for (String line : lines) {
            String[] f = line.split(" ");
            long epoch = Long.parseLong(f[2]);
            assertTrue(epoch >= last, "a leader of epoch " + epoch + " acted after epoch " + last + " was elected: "
                    + line);
            if (f[0].equals("elected")) {
                assertTrue(epoch > last || elections == 0, "elected again with epoch " + epoch);
                assertEquals(null, pidOfEpoch.put(epoch, f[1]), "two elections with epoch " + epoch);
                elections++;
            } else {
                assertEquals(pidOfEpoch.get(epoch), f[1], "a tick of epoch " + epoch + " from another process");
            }
            last = epoch;
        }
        assertEquals(terms, elections, "leaders elected");
    }

    /** Waits for one living candidate to log an election above {@code epoch}; {@return it} */
    private static Candidate awaitNewLeader(List<Candidate> alive, long epoch) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            List<Candidate> elected = new ArrayList<>();
            for (Candidate c : alive) {
                if (c.lastElected() > epoch) {
                    elected.add(c);
                }
            }
            assertTrue(elected.size() <= 1, "two candidates elected after epoch " + epoch);
            if (elected.size() == 1) {
                return elected.get(0);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no candidate elected after epoch " + epoch + " within 120 s");
            }
            Thread.sleep(50);
        }
    }

    private Candidate start(String uri, int index, Path shared, List<Process> all) throws Exception {
        Path own = tempDir.resolve("candidate-" + index + ".log");
        Path err = tempDir.resolve("candidate-" + index + ".err");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder = new ProcessBuilder(java, "-Xshare:auto", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"),
                LeaderCandidateMain.class.getName(), uri, "leader", own.toString(), shared.toString());
        builder.redirectError(err.toFile());
        Process process = builder.start();
        all.add(process);
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        String first = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                return null;
            }
        }).get(120, TimeUnit.SECONDS);
        if (!"READY".equals(first)) {
            throw new AssertionError("candidate " + index + " failed (" + first + "): " + Files.readString(err));
        }
        return new Candidate(process, own);
    }
}
