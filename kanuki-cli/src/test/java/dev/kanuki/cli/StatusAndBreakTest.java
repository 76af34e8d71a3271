package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.spi.ProcessIdentity;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code kanuki status} and {@code kanuki break} end to end: real holder processes (killed with
 * SIGKILL, or alive), real lock files in a temporary directory, the command in child JVMs.
 */
@Timeout(120)
@Tag("slow")
class StatusAndBreakTest {
    private static final String HEADER = "NAME +STATE +STRATEGY +OWNER +AGE +LEASE LEFT +TOKEN";
    private static final String HOST = ProcessIdentity.host(); // the children find the same name

    @TempDir
    Path dir;
    private final List<Holder> holders = new ArrayList<>();

    @AfterEach
    void killLeftoverHolders() throws InterruptedException {
        for (Holder holder : holders) {
            holder.kill();
        }
    }

    private String backend(String strategy) {
        return "file:" + dir.resolve("locks") + "?strategy=" + strategy;
    }

    private Holder hold(String backend, String name, String... runOptions) throws IOException {
        Holder holder = Holder.start(dir, backend, name, runOptions);
        holders.add(holder);
        return holder;
    }

    @ParameterizedTest
    @ValueSource(strings = {"mkdir", "create"})
    void aKilledHoldersLockIsListedStaleAndBrokenOnceEvenByTwoBreakersAtOnce(String strategy) throws Exception {
        String backend = backend(strategy);
        Holder job = hold(backend, "job");
        Holder race = hold(backend, "race");
        long jobPid = job.awaitHolding();
        long racePid = race.awaitHolding();
        job.kill();
        race.kill();

        Cli.Result listed = Cli.run(dir, "status", "-b", backend);
        assertEquals(0, listed.exitCode(), listed::err);
        List<String> lines = listed.out().lines().toList();
        assertEquals(3, lines.size(), listed::out);
        assertTrue(lines.get(0).matches(HEADER), listed::out);
        // Stale at once, before the lease runs out: the owner is on this host and its pid is gone.
        assertRow(lines.get(1), "job", "stale", strategy, jobPid + "@" + Pattern.quote(HOST), "\\d+(ms|s)", "\\d+s", "\\d+");
        assertRow(lines.get(2), "race", "stale", strategy, racePid + "@" + Pattern.quote(HOST), "\\d+(ms|s)", "\\d+s", "\\d+");

        Cli.Result json = Cli.run(dir, "status", "-b", backend, "--json");
        assertEquals(0, json.exitCode(), json::err);
        assertTrue(json.out().startsWith("[{\"name\":\"job\",\"state\":\"stale\",\"strategy\":\"" + strategy
                + "\",\"owner\":\"" + jobPid + "@" + HOST + "\",\"host\":\"" + HOST + "\",\"pid\":" + jobPid + ","),
                json::out);
        assertTrue(Pattern.compile("\"ageMillis\":\\d+,\"acquiredAt\":\\d{13},\"leaseLeft\":\"\\d+s\","
                + "\"leaseLeftMillis\":\\d+,\"leaseUntil\":\\d{13},\"token\":\\d+}").matcher(json.out()).find(),
                json::out);

        Cli.Result broke = Cli.run(dir, "break", "-b", backend, "job");
        assertEquals(0, broke.exitCode(), broke::err);
        assertEquals("broke stale lock 'job' of pid " + jobPid + " on " + HOST + " (its process is gone from this host)",
                broke.out().strip());
        assertEquals("", broke.err());

        Cli.Running first = Cli.start(dir, "break", "-b", backend, "race");
        Cli.Running second = Cli.start(dir, "break", "-b", backend, "race");
        Cli.Result a = first.await();
        Cli.Result b = second.await();
        String brokeRace = "broke stale lock 'race' of pid " + racePid + " on " + HOST
                + " (its process is gone from this host)";
        String nothing = "lock 'race' is not held; nothing to break";
        for (Cli.Result r : List.of(a, b)) {
            assertEquals(0, r.exitCode(), r::err);
            assertEquals("", r.err());
            assertTrue(r.out().strip().equals(brokeRace) || r.out().strip().equals(nothing), r::out);
        }
        assertTrue(a.out().contains("broke") || b.out().contains("broke"), a.out() + b.out());

        Cli.Result after = Cli.run(dir, "status", "-b", backend);
        assertEquals(0, after.exitCode(), after::err);
        assertEquals("no locks", after.out().strip());

        // Both broken locks can be taken again, by exactly one of two contenders.
        Cli.Result loser = awaitOneHoldsAndTheOtherExits(hold(backend, "race", "-n"), hold(backend, "race", "-n"));
        assertEquals(75, loser.exitCode(), loser::err);
        // The holder is named only when the loser looked after the winner had written its record.
        assertTrue(loser.err().startsWith("kanuki: lock 'race' is busy"), loser::err);
        Cli.Result job2 = Cli.run(dir, "run", "-b", backend, "-n", "job", "--", "true");
        assertEquals(0, job2.exitCode(), job2::err);
    }

    @ParameterizedTest
    @ValueSource(strings = {"mkdir", "queue"})
    void aLiveLockIsOnlyBrokenWithForceAndItsHolderFindsItLost(String strategy) throws Exception {
        // A short lease, so the holder's watchdog (renewing every lease/3) notices the loss soon.
        String backend = backend(strategy) + "&lease=6s";
        Holder holder = hold(backend, "job");
        long pid = holder.awaitHolding();

        Cli.Result refused = Cli.run(dir, "break", "-b", backend, "job");
        assertEquals(75, refused.exitCode(), refused::err);
        assertEquals(1, refused.errLines().size(), refused::err);
        assertTrue(refused.err().startsWith("kanuki: lock 'job' is live (pid " + pid + " on " + HOST), refused::err);
        assertTrue(refused.err().contains("--force"), refused::err);
        assertEquals("", refused.out());

        Cli.Result forced = Cli.run(dir, "break", "-b", backend, "--force", "job");
        assertEquals(0, forced.exitCode(), forced::err);
        assertEquals("broke live lock 'job' of pid " + pid + " on " + HOST + " (--force)", forced.out().strip());
        assertEquals(1, forced.errLines().size(), forced::err);
        assertTrue(forced.err().startsWith("kanuki: warning: --force broke a live lock: its holder, pid " + pid
                + " on " + HOST + ", will find its lock lost"), forced::err);

        Cli.Result next = Cli.run(dir, "run", "-b", backend, "-n", "job", "--", "true");
        assertEquals(0, next.exitCode(), next::err);

        // The holder notices at its next renewal, terminates its command and exits 76.
        Cli.Result lost = holder.run.await();
        assertEquals(ExitCodes.LOCK_LOST, lost.exitCode(), lost::err);
        assertTrue(lost.err().startsWith("kanuki: lock 'job' was lost at "), lost::err);
    }

    @Test
    void osLocksAreListedButCannotBeBrokenAndHostileNamesAreEscaped() throws Exception {
        String backend = "file:" + dir.resolve("locks"); // strategy os, the default
        String hostile = "../evil\n\u001b[31mred";
        // A released os lock leaves no file, so the hostile name is listed while it is held.
        Holder hostileHolder = hold(backend, hostile);
        long hostilePid = hostileHolder.awaitHolding();
        Holder holder = hold(backend, "job");
        long pid = holder.awaitHolding();

        Cli.Result listed = Cli.run(dir, "status", "-b", backend);
        assertEquals(0, listed.exitCode(), listed::err);
        assertFalse(listed.out().contains("\u001b"), listed::out);
        List<String> lines = listed.out().lines().toList();
        assertEquals(3, lines.size(), listed::out);
        assertTrue(lines.get(0).matches(HEADER), listed::out);
        assertRow(lines.get(1), Pattern.quote("../evil\\x0a\\x1b[31mred"), "held", "os",
                hostilePid + "@" + Pattern.quote(HOST), "\\d+(ms|s)", "session", "\\d+");
        assertRow(lines.get(2), "job", "held", "os", pid + "@" + Pattern.quote(HOST), "\\d+(ms|s)", "session", "\\d+");

        Cli.Result json = Cli.run(dir, "status", "-b", backend, "--json", hostile);
        assertEquals(0, json.exitCode(), json::err);
        assertTrue(json.out().startsWith("[{\"name\":\"../evil\\n\\u001b[31mred\",\"state\":\"held\","), json::out);
        assertEquals(143, hostileHolder.stop().exitCode());

        Cli.Result refused = Cli.run(dir, "break", "-b", backend, "--force", "job");
        assertEquals(3, refused.exitCode(), refused::err);
        assertEquals(1, refused.errLines().size(), refused::err);
        assertTrue(refused.err().contains("kernel locks"), refused::err);
        assertTrue(refused.err().contains("held by pid " + pid + " on " + HOST), refused::err);
        assertEquals("", refused.out());

        assertEquals(143, holder.stop().exitCode());
    }

    @Test
    void aPlantedRecordWithEscapesInItsHostReachesNoTerminalRaw() throws Exception {
        String backend = backend("create");
        Cli.Result used = Cli.run(dir, "run", "-b", backend, "planted", "--", "true");
        assertEquals(0, used.exitCode(), used::err);
        // The lock file's name: the name's safe stem (released, it is gone: plant it afresh).
        Path locks = dir.resolve("locks");
        String stem = dev.kanuki.spi.SafeNames.stem("planted", "L");
        // A live-looking record of another host, whose host name sets the terminal's title and colour.
        long now = System.currentTimeMillis();
        String head = "K1 " + "ab".repeat(16) + " 4242 " + now + " " + (now + 600_000)
                + " evil\u001b]0;pwned\u0007\u001b[31m\u009b2J planted";
        CRC32C crc = new CRC32C();
        crc.update(head.getBytes(StandardCharsets.UTF_8));
        Files.writeString(locks.resolve(stem + ".lck"), head + " " + String.format("%08x", crc.getValue()) + "\n");

        Cli.Result listed = Cli.run(dir, "status", "-b", backend);
        Cli.Result refused = Cli.run(dir, "break", "-b", backend, "planted");
        Cli.Result busy = Cli.run(dir, "run", "-b", backend, "-n", "planted", "--", "true");
        // A host name with control characters makes the record unreadable: shown as such, never raw.
        String row = listed.out().lines().toList().get(1);
        assertTrue(row.startsWith("<unreadable entry " + stem + ".lck") && row.contains(" unknown "), row);
        assertEquals(75, refused.exitCode(), refused::err);
        assertTrue(refused.err().contains("unreadable record"), refused::err);
        assertEquals(75, busy.exitCode(), busy::err);
        for (Cli.Result r : List.of(listed, refused, busy)) {
            String all = r.out() + r.err();
            assertFalse(all.chars().anyMatch(c -> c < 0x20 && c != '\n' || c >= 0x7f && c <= 0x9f), all);
        }
    }

    @Test
    void emptyListingsUnlistableBackendsAndFreeLocks() throws Exception {
        String backend = backend("symlink");
        Cli.Result empty = Cli.run(dir, "status", "-b", backend);
        assertEquals(0, empty.exitCode(), empty::err);
        assertEquals("no locks", empty.out().strip());

        Cli.Result emptyJson = Cli.run(dir, "status", "-b", backend, "--json");
        assertEquals("[]", emptyJson.out().strip(), emptyJson::err);

        Cli.Result nothing = Cli.run(dir, "break", "-b", backend, "never-used");
        assertEquals(0, nothing.exitCode(), nothing::err);
        assertEquals("lock 'never-used' is not held; nothing to break", nothing.out().strip());

        Cli.Result mem = Cli.run(dir, "status", "-b", "mem:");
        assertEquals(2, mem.exitCode(), mem::err);
        assertEquals(List.of("kanuki: mem: cannot list its locks; name them: kanuki status -b mem: NAME..."),
                mem.errLines());
    }

    /** Checks a table row cell by cell; each expectation is a regular expression. */
    private static void assertRow(String line, String... cells) {
        String pattern = String.join(" +", cells);
        assertTrue(line.matches(pattern), () -> "row '" + line + "' does not match '" + pattern + "'");
    }

    /** Two holders contend with -n: exactly one gets the lock, the other exits; returns the other's result. */
    private static Cli.Result awaitOneHoldsAndTheOtherExits(Holder one, Holder two) throws Exception {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (one.run.process.isAlive() && two.run.process.isAlive()) {
            assertTrue(System.nanoTime() < deadline, "neither contender exited");
            Thread.sleep(20);
        }
        Holder loser = one.run.process.isAlive() ? two : one;
        Holder winner = loser == one ? two : one;
        winner.awaitHolding();
        assertFalse(loser.isHolding(), "both contenders ran their command");
        return loser.run.await();
    }
}
