package dev.kanuki.jdbc;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.contract.ManyLocksHolder;
import dev.kanuki.testkit.PostgresServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Many waiters on names another process holds: a waiter blocked in the server holds a
 * connection, so at most {@code waitThreads} sessions wait in the server at once; the others
 * keep trying, and all are served once the other process lets go.
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
@Tag("servers")
class PostgresManyWaitersTest {
    @TempDir
    Path tempDir;

    @Test
    void sessionsWaitingInTheServerAreBounded() throws Exception {
        PostgresServer pg = PostgresServer.shared();
        String database = pg.createDatabase("many_waiters");
        String uri = pg.kanukiUri(database) + "&restartGrace=0&waitThreads=3";
        int names = 40;
        try (ManyLocksHolder holder = ManyLocksHolder.start(uri, "n", names, tempDir.resolve("holder.err"));
             LockProvider provider = LockProvider.open(uri);
             Connection observer = pg.connect(database)) {
            List<CompletableFuture<Void>> served = new ArrayList<>();
            for (int i = 0; i < names; i++) {
                served.add(provider.lock("n" + i).acquireAsync(Duration.ofMinutes(3)).thenAccept(LockHandle::close));
            }
            int mostWaiting = 0;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            while (System.nanoTime() < deadline) {
                mostWaiting = Math.max(mostWaiting, sessionsWaitingForLocks(observer, database));
                Thread.sleep(50);
            }
            assertTrue(mostWaiting >= 1, "some waiters block in the server (else the test proves nothing)");
            assertTrue(mostWaiting <= 3, "at most waitThreads sessions wait in the server, saw " + mostWaiting);
            assertTrue(served.stream().noneMatch(CompletableFuture::isDone), "nobody served while the other process holds");
            holder.releaseAll();
            CompletableFuture.allOf(served.toArray(CompletableFuture[]::new)).get(3, TimeUnit.MINUTES);
        }
    }

    private static int sessionsWaitingForLocks(Connection c, String database) throws Exception {
        try (PreparedStatement s = c.prepareStatement(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = ? AND wait_event_type = 'Lock'")) {
            s.setString(1, database);
            try (ResultSet r = s.executeQuery()) {
                r.next();
                return r.getInt(1);
            }
        }
    }
}
