package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kanuki.testkit.MissingServerException;
import dev.kanuki.testkit.PgBouncerServer;
import dev.kanuki.testkit.PgBouncerServer.PoolMode;
import dev.kanuki.testkit.PostgresServer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kanuki run} through a real PgBouncer in {@code pool_mode=transaction}: once two runs held
 * one lock at once and exited 0; now the run is refused before its command starts, with one line
 * that says what to do, and exit code 3. Skipped, naming the package, where {@code pgbouncer} is
 * not installed.
 */
@Timeout(180)
@Tag("servers")
class PgBouncerRunTest {
    @TempDir
    Path dir;

    @Test
    void runThroughTransactionPoolingIsRefusedWithOneLine() throws Exception {
        PostgresServer pg = PostgresServer.shared();
        String database = pg.createDatabase("cli_bouncer");
        PgBouncerServer bouncer;
        try {
            bouncer = PgBouncerServer.start(pg, PoolMode.TRANSACTION);
        } catch (MissingServerException e) {
            assumeTrue(false, e.getMessage());
            return;
        }
        try (bouncer) {
            Path ran = dir.resolve("ran");
            Cli.Result r = Cli.run(dir, "run", "-b", bouncer.kanukiUri(database) + "&restartGrace=0", "nightly", "--",
                    "touch", ran.toString());
            assertEquals(ExitCodes.BACKEND, r.exitCode(), r.err());
            assertFalse(Files.exists(ran), "the command must not run without the lock");
            String[] lines = r.err().strip().split("\n");
            assertEquals(1, lines.length, "one line: " + r.err());
            assertTrue(lines[0].startsWith("kanuki: ") && lines[0].contains("pool_mode=transaction")
                    && lines[0].contains("pool_mode=session"), r.err());
        }
    }
}
