package dev.kanuki.testkit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.core.ConditionTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Leader election across JVMs on one backend, for that backend's tests: candidates
 * ({@link LeaderCandidateMain}, three by default) stand in an election on the backend's URI; the
 * leader is killed with SIGKILL (three times by default), and each time a new candidate joins, so
 * that as many stand again. Each time, another candidate must be elected, with an epoch above the
 * last leader's, within the backend's documented bound for a dead leader plus a slack for a loaded
 * machine (30 s by default): a liveness deadline, not a measure of speed. At the end the shared
 * log, where every leader writes its election and, while its term is current, a tick every 20 ms,
 * must show one leader at a time: its epochs never go down (a deposed leader still at work after
 * the next was elected would write a lower one), each epoch is one process's, and there was one
 * election per term.
 *
 * <pre>{@code
 * ElectionHarness.Result result = ElectionHarness.on(redis.kanukiUri() + "?lease=5s", tempDir,
 *         Duration.ofMillis(5313)).run();
 * }</pre>
 *
 * <p>The candidates run with the test JVM's own class path, so the backend's module (and
 * kanuki-testkit) must be on it, as they are in the backend's tests. SIGKILL ends a candidate
 * without a release and without {@code revoked()}: the backend alone frees the lock (the lease
 * runs out, the session ends). It never pauses a leader, so the ttl-pause case (a leader stopped
 * past its lease, which may act for a moment after the next was elected) is not exercised here.
 */
public final class ElectionHarness {
    private static final Logger log = LoggerFactory.getLogger(ElectionHarness.class);
    /** The first election has no documented bound: the candidates' JVMs start, then one wins at once. */
    private static final Duration FIRST_ELECTION = Duration.ofSeconds(120);
    private static final Duration POLL = Duration.ofMillis(50);

    private final String uri;
    private final Path dir;
    private final Duration takeoverBound;
    private int candidates = 3;
    private int kills = 3;
    private Duration slack = Duration.ofSeconds(30);
    private String name = "leader";

    private ElectionHarness(String uri, Path dir, Duration takeoverBound) {
        this.uri = Objects.requireNonNull(uri, "uri");
        this.dir = Objects.requireNonNull(dir, "dir");
        this.takeoverBound = Objects.requireNonNull(takeoverBound, "takeoverBound");
    }

    /**
     * A harness for an election on {@code uri}.
     *
     * @param uri the backend's URI, with the options that make the bound short (a lease, a session timeout)
     * @param dir an empty directory of the test's own, for the logs
     * @param takeoverBound the backend's documented bound between a leader's SIGKILL and a standby's
     *     election with that URI ({@link Duration#ZERO} for "at once")
     * @return the harness, to configure and {@link #run()}
     */
    public static ElectionHarness on(String uri, Path dir, Duration takeoverBound) {
        return new ElectionHarness(uri, dir, takeoverBound);
    }

    /**
     * Sets how many candidates stand at a time (default 3).
     *
     * @param count at least 2
     * @return this harness
     */
    public ElectionHarness candidates(int count) {
        if (count < 2) {
            throw new IllegalArgumentException("an election needs at least 2 candidates: " + count);
        }
        this.candidates = count;
        return this;
    }

    /**
     * Sets how many times the leader is killed (default 3).
     *
     * @param count at least 1
     * @return this harness
     */
    public ElectionHarness kills(int count) {
        if (count < 1) {
            throw new IllegalArgumentException("at least one kill: " + count);
        }
        this.kills = count;
        return this;
    }

    /**
     * Sets the time allowed beyond the bound before a missing new leader fails the run (default 30 s).
     *
     * @param slack for a loaded machine: JVMs, the server and the test share its cores
     * @return this harness
     */
    public ElectionHarness slack(Duration slack) {
        this.slack = Objects.requireNonNull(slack, "slack");
        return this;
    }

    /**
     * Sets the election's name (default {@code leader}).
     *
     * @param name the name of the election, which is the name of its lock
     * @return this harness
     */
    public ElectionHarness name(String name) {
        this.name = Objects.requireNonNull(name, "name");
        return this;
    }

    /**
     * What a run saw.
     *
     * @param epochs the epoch of each term, in order: the first leader's, then one per kill
     * @param takeovers for each kill, from the kill to the next leader's election (by the wall clock
     *     of this host, which the candidates share)
     */
    public record Result(List<Long> epochs, List<Duration> takeovers) {
        /**
         * Copies the lists.
         *
         * @param epochs the epoch of each term
         * @param takeovers the time of each takeover
         */
        public Result {
            epochs = List.copyOf(epochs);
            takeovers = List.copyOf(takeovers);
        }
    }

    /** A candidate JVM, its own log and its standard error. */
    private record Candidate(int index, Process process, Path log, Path err) {
        /** {@return its elections so far, in order, each its epoch and when (ms)} */
        List<long[]> elections() throws IOException {
            List<long[]> elections = new ArrayList<>();
            if (Files.exists(log)) {
                String text = Files.readString(log);
                // only whole lines: one still being written is read again at the next poll
                for (String line : text.substring(0, text.lastIndexOf('\n') + 1).split("\n")) {
                    String[] f = line.split(" ");
                    if (f[0].equals("elected")) {
                        elections.add(new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
                    }
                }
            }
            return elections;
        }
    }

    /**
     * Runs the candidates, kills the leader the set number of times, waits for each new leader,
     * checks the shared log, and kills every candidate.
     *
     * @return the epochs and takeover times seen
     * @throws AssertionError when a check fails: two candidates elected at once, no new leader within
     *     the bound plus the slack, an epoch not above the last, a shared log that shows two leaders at
     *     once (with each candidate's log and standard error in the message)
     * @throws Exception when a candidate cannot be started
     */
    public Result run() throws Exception {
        Path shared = dir.resolve("shared.log");
        List<Candidate> all = new ArrayList<>();
        List<Long> epochs = new ArrayList<>();
        List<Duration> takeovers = new ArrayList<>();
        Candidate leader = null;
        try {
            List<Candidate> alive = new ArrayList<>();
            for (int i = 0; i < candidates; i++) {
                alive.add(start(i, shared, all));
            }
            leader = awaitNewLeader(alive, Map.of(), System.nanoTime() + FIRST_ELECTION.toNanos(),
                    "the first election, within " + FIRST_ELECTION.toSeconds() + " s");
            long epoch = last(leader.elections())[0];
            epochs.add(epoch);
            Duration limit = takeoverBound.plus(slack);
            for (int kill = 0; kill < kills; kill++) {
                // a new leader is a candidate with an election more than now, whatever its epoch
                Map<Candidate, Integer> before = new HashMap<>();
                for (Candidate c : alive) {
                    before.put(c, c.elections().size());
                }
                long killedNanos = System.nanoTime();
                long killedMillis = System.currentTimeMillis();
                leader.process().destroyForcibly(); // SIGKILL: no release, no revoked()
                assertTrue(leader.process().waitFor(60, TimeUnit.SECONDS), "the killed leader did not die");
                alive.remove(leader);
                // the standbys already there are the ones expected to take over; the newcomer keeps the count
                alive.add(start(candidates + kill, shared, all));
                Candidate next = awaitNewLeader(alive, before, killedNanos + limit.toNanos(),
                        "a new leader after killing the leader of epoch " + epoch + ", within the bound ("
                                + takeoverBound.toMillis() + " ms) + " + slack.toSeconds() + " s");
                long[] elected = last(next.elections());
                assertTrue(elected[0] > epoch, "candidate " + next.index() + " was elected with epoch " + elected[0]
                        + ", not above the killed leader's " + epoch);
                Duration took = Duration.ofMillis(Math.max(0, elected[1] - killedMillis));
                // the wait above may have begun late (a slow newcomer): the election's own time decides
                assertTrue(took.compareTo(limit) <= 0, "candidate " + next.index() + " was elected " + took.toMillis()
                        + " ms after the kill, past the bound (" + takeoverBound.toMillis() + " ms) + "
                        + slack.toSeconds() + " s");
                log.info("election on {}: candidate {} elected with epoch {}, {} ms after the leader of epoch {} "
                        + "was killed (bound {} ms)", uri, next.index(), elected[0], took.toMillis(), epoch,
                        takeoverBound.toMillis());
                epochs.add(elected[0]);
                takeovers.add(took);
                leader = next;
                epoch = elected[0];
            }
        } catch (AssertionError | ConditionTimeoutException e) {
            throw new AssertionError(e.getMessage() + describe(all), e);
        } finally {
            stopAll(all, leader);
        }
        try {
            checkOneLeaderAtATime(Files.readAllLines(shared), kills + 1);
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + describe(all), e);
        }
        return new Result(epochs, takeovers);
    }

    /**
     * Kills the standbys first and the leader last: a standby still alive when the leader dies
     * could be elected (at once on a session backend) and add an election after the last term.
     */
    private static void stopAll(List<Candidate> all, Candidate leader) throws InterruptedException {
        for (Candidate c : all) {
            if (c != leader) {
                c.process().destroyForcibly();
            }
        }
        for (Candidate c : all) {
            if (c != leader) {
                c.process().waitFor(60, TimeUnit.SECONDS);
            }
        }
        if (leader != null) {
            leader.process().destroyForcibly();
            leader.process().waitFor(60, TimeUnit.SECONDS);
        }
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

    private static long[] last(List<long[]> elections) {
        return elections.get(elections.size() - 1);
    }

    /**
     * Waits until {@code deadlineNanos} for one living candidate to log an election beyond the
     * {@code before} count (none for a newcomer), failing at once when two have; {@return it}
     */
    private static Candidate awaitNewLeader(List<Candidate> alive, Map<Candidate, Integer> before,
            long deadlineNanos, String what) {
        AtomicReference<Candidate> found = new AtomicReference<>();
        // at least one poll, even when starting the newcomer took longer than the deadline: an
        // election logged in time is then found at once
        Duration left = Duration.ofNanos(Math.max(deadlineNanos - System.nanoTime(), 0)).plus(POLL);
        await().alias(what).atMost(left).pollDelay(Duration.ZERO).pollInterval(POLL).until(() -> {
            List<Candidate> elected = new ArrayList<>();
            for (Candidate c : alive) {
                if (c.elections().size() > before.getOrDefault(c, 0)) {
                    elected.add(c);
                }
            }
            assertTrue(elected.size() <= 1, "two candidates elected at once: "
                    + elected.stream().map(Candidate::index).toList());
            found.set(elected.isEmpty() ? null : elected.get(0));
            return found.get() != null;
        });
        return found.get();
    }

    private Candidate start(int index, Path shared, List<Candidate> all) throws Exception {
        Path own = dir.resolve("candidate-" + index + ".log");
        Path err = dir.resolve("candidate-" + index + ".err");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // C1 only: a candidate runs little code, and starts faster on a loaded machine
        ProcessBuilder builder = new ProcessBuilder(java, "-Xshare:auto", "-XX:TieredStopAtLevel=1",
                "-cp", System.getProperty("java.class.path"),
                LeaderCandidateMain.class.getName(), uri, name, own.toString(), shared.toString());
        builder.redirectError(err.toFile());
        Process process = builder.start();
        Candidate candidate = new Candidate(index, process, own, err);
        all.add(candidate);
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
        return candidate;
    }

    /** {@return each candidate's own log and the end of its standard error, for a failure's message} */
    private static String describe(List<Candidate> all) {
        StringBuilder b = new StringBuilder();
        for (Candidate c : all) {
            b.append("\n--- candidate ").append(c.index()).append(" (pid ").append(c.process().pid()).append(')');
            b.append("\n").append(readQuietly(c.log(), 40));
            b.append("\n  stderr:\n").append(readQuietly(c.err(), 20));
        }
        return b.toString();
    }

    private static String readQuietly(Path file, int lastLines) {
        try {
            if (!Files.exists(file)) {
                return "(none)";
            }
            List<String> lines = Files.readAllLines(file);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - lastLines), lines.size()));
        } catch (IOException | RuntimeException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
