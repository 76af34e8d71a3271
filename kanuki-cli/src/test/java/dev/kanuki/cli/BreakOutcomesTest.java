package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * How {@code kanuki break} reads the backend's answers, in process, against the scripted backend
 * ({@link ScriptedBackendFactory}): a racing breaker is waited for, a live lock is reported at
 * once, an expired lease is named, an entry the backend left alone is not reported as broken.
 */
class BreakOutcomesTest {

    private record Run(int exitCode, String out, String err) {
    }

    private static Run kanuki(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cli = KanukiCli.commandLine();
        cli.setOut(new PrintWriter(out));
        cli.setErr(new PrintWriter(err));
        int code = cli.execute(args);
        return new Run(code, out.toString(), err.toString());
    }

    @Test
    void aBreakerThatLosesTheRaceWaitsAndFindsNothingToBreak() {
        Run r = kanuki("break", "-b", "scripted:", "racing");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals("lock 'racing' is not held; nothing to break", r.out().strip());
        assertEquals("", r.err());
        assertEquals(3, ScriptedBackendFactory.RACING_BREAKS.get());
    }

    @Test
    void aLiveLockIsReportedAtOnceWithoutRetrying() {
        Run r = kanuki("break", "-b", "scripted:", "live");
        assertEquals(75, r.exitCode(), r.err());
        assertTrue(r.err().startsWith("kanuki: lock 'live' is live (pid 4242 on elsewhere"), r.err());
        assertEquals(1, ScriptedBackendFactory.LIVE_BREAKS.get());
        assertEquals("", r.out());
    }

    @Test
    void anExpiredLeaseIsNamedAsTheReason() {
        Run r = kanuki("break", "-b", "scripted:", "expired");
        assertEquals(0, r.exitCode(), r.err());
        assertEquals("broke stale lock 'expired' of pid 4242 on elsewhere (lease ran out 12s ago)", r.out().strip());
        assertEquals("", r.err());
    }

    @Test
    void anEntryTheBackendLeftAloneIsNotReportedAsBroken() {
        Run r = kanuki("break", "-b", "scripted:", "planted");
        assertEquals(3, r.exitCode(), r.err());
        assertTrue(r.err().startsWith("kanuki: lock 'planted' has an entry kanuki cannot read as a lock"), r.err());
        assertTrue(r.err().contains("nothing was removed"), r.err());
        assertEquals("", r.out());
    }

    @Test
    void breakHelpListsItsOwnExitCodes() {
        Run r = kanuki("break", "--help");
        assertEquals(0, r.exitCode(), r.err());
        assertTrue(r.out().contains("  75   the lock is live and --force was not given"), r.out());
        assertTrue(r.out().contains("  3    the backend cannot break locks (os strategy"), r.out());
        assertTrue(r.out().contains("kanuki break -b 'file:/var/lock/app?strategy=mkdir' --force nightly"), r.out());
    }
}
