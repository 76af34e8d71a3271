package dev.kanuki.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.testkit.PostgresServer;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * An interrupted waiter's statement is cancelled even when the first cancel comes too early: on a
 * loaded machine the watcher can see the interrupt before the statement reaches the server, and
 * a cancel then cancels nothing (the driver drops it for a statement not yet running). Seen as a
 * waiter that stayed blocked 30 s after its interrupt behind PgBouncer, in a loaded suite run.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("servers")
class CancelOnInterruptTest {
    private static PostgresServer pg;
    private static String database;

    @BeforeAll
    static void server() {
        pg = PostgresServer.shared();
        database = pg.createDatabase("cancel_on_interrupt");
    }

    @Test
    void aCancelSentBeforeTheStatementRunsIsSentAgain() throws Exception {
        try (Connection holder = pg.connect(database);
             Statement hold = holder.createStatement();
             Connection waiter = pg.connect(database);
             PreparedStatement blocking = waiter.prepareStatement("SELECT pg_advisory_lock(4242)")) {
            hold.execute("SELECT pg_advisory_lock(4242)");
            CompletableFuture<SQLException> ended = CompletableFuture.supplyAsync(() -> {
                Thread.currentThread().interrupt(); // the interrupt is there before the statement runs
                CancelOnInterrupt.Watch watch = CancelOnInterrupt.watch(blocking, Long.MAX_VALUE);
                try {
                    // Let the watcher see the interrupt and send its cancel first.
                    Awaitility.await().atMost(30, TimeUnit.SECONDS).until(watch::cancelled);
                    blocking.execute();
                    return null;
                } catch (SQLException e) {
                    return e;
                } finally {
                    watch.close();
                    Thread.interrupted();
                }
            });
            SQLException e = ended.get(60, TimeUnit.SECONDS); // the old watcher never sent another: blocked for good
            assertTrue(e != null, "the blocked statement returned without the lock being free");
            assertEquals("57014", e.getSQLState(), "query_canceled expected: " + e.getMessage());
        }
    }
}
