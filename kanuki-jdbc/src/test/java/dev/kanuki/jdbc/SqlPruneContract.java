package dev.kanuki.jdbc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.testkit.ServerProcess;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code prune} on the SQL servers removes the rows of free locks whose last token the server
 * clock has passed by the fence margin, and keeps every name's fencing tokens strictly increasing:
 * a name's row starts its tokens at the server clock in microseconds, so a row made again after a
 * prune starts above every token the removed one issued, by every way a token is issued (on
 * demand, with a try, with a wait, to a reader). A held lock keeps its row; a row the margin still
 * covers stays. Each test has its own database. {@link PostgresPruneTest}, {@link MysqlPruneTest}.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Tag("servers")
abstract class SqlPruneContract {
    private static final Duration WAIT = Duration.ofSeconds(30);
    /**
     * MySQL's clock in the tokens is whole seconds: a row made in this second may sit above it
     * until the next one, so the tests let a second pass before a prune with no margin.
     */
    private static final long CLOCK_TICK_MILLIS = 1_100;

    /** {@return the running server} */
    abstract ServerProcess server();

    /** {@return whether the backend has shared (read) locks} */
    abstract boolean sharedLocks();

    /** A provider URI on its own database; {@code margin} as the fence margin ("0s": none). */
    private String uri(String database, String margin) {
        return server().kanukiUri(server().createDatabase(database)) + "&restartGrace=0&fenceMargin=" + margin;
    }

    /**
     * Tokens go on above a name's last token after its row was pruned: asked for on demand by a
     * provider that never saw the name, issued with a try and with a wait by one that knows the
     * name is used with fencing, and read by a reader.
     */
    @Test
    void tokensStayIncreasingAcrossAPrune() throws Exception {
        String db = "prune_tokens";
        String uri = uri(db, "0s");
        Map<String, Long> last = new ConcurrentHashMap<>();
        try (LockProvider locks = LockProvider.open(uri)) {
            for (String name : List.of("p/on-demand", "p/eager-try", "p/eager-wait", "p/reader")) { // reader: a writer here
                for (int i = 0; i < 5; i++) { // the later ones are issued with the acquisition: the name is fenced
                    try (LockHandle h = locks.lock(name).acquire(WAIT)) {
                        long token = h.fencingToken();
                        Long before = last.put(name, token);
                        assertTrue(before == null || token == before + 1, name + ": " + token + " after " + before);
                    }
                }
            }
            Thread.sleep(CLOCK_TICK_MILLIS);
            List<String> removed = locks.prune(false);
            assertEquals(4, removed.size(), removed.toString());
            assertTrue(removed.contains("kanuki_locks row of 'p/eager-try'"), removed.toString());
            assertEquals(0, rowsNamed(db, "p/"), "the free locks' rows are gone");

            // This provider remembers the names as fenced: its next acquisitions issue with the lock.
            try (LockHandle h = locks.lock("p/eager-try").tryAcquire().orElseThrow()) {
                assertTrue(h.fencingToken() > last.get("p/eager-try"), h.fencingToken() + " after " + last);
            }
            try (LockHandle h = locks.lock("p/eager-wait").acquire(WAIT)) {
                assertTrue(h.fencingToken() > last.get("p/eager-wait"), h.fencingToken() + " after " + last);
            }
            if (sharedLocks()) {
                try (LockHandle h = locks.readWriteLock("p/reader").readLock().acquire(WAIT)) {
                    assertTrue(h.fencingToken() >= 0, "a reader of a pruned name: " + h.fencingToken());
                }
            }
        }
        try (LockProvider fresh = LockProvider.open(uri)) { // no hints: the row is made again, the token asked for
            try (LockHandle h = fresh.lock("p/on-demand").acquire(WAIT)) {
                assertTrue(h.fencingToken() > last.get("p/on-demand"), h.fencingToken() + " after " + last);
            }
            try (LockHandle h = fresh.lock("p/reader").acquire(WAIT)) {
                assertTrue(h.fencingToken() > last.get("p/reader"), h.fencingToken() + " after " + last);
            }
        }
    }

    /**
     * With the default margin (an hour) nothing just used goes; a row with no token yet (a name
     * locked without fencing) goes at once, and the name's first token is still the clock's.
     */
    @Test
    void theMarginKeepsRecentTokensRows() throws Exception {
        String db = "prune_margin";
        try (LockProvider locks = LockProvider.open(uri(db, "1h"))) {
            long token;
            try (LockHandle h = locks.lock("m/fenced").acquire(WAIT)) {
                token = h.fencingToken();
            }
            long clockMicros = TimeUnit.MILLISECONDS.toMicros(System.currentTimeMillis());
            assertTrue(Math.abs(clockMicros - token) < TimeUnit.MINUTES.toMicros(10),
                    "a new row's first token is the server clock in µs: " + token + " vs " + clockMicros);
            try (LockHandle h = locks.lock("m/unfenced").acquire(WAIT)) {
                assertTrue(h.isHeld());
            }
            assertEquals(1, rowsNamed(db, "m/unfenced"), "the name is registered (for list) without a token");

            assertEquals(List.of("kanuki_locks row of 'm/unfenced'"), locks.prune(true));
            assertEquals(List.of("kanuki_locks row of 'm/unfenced'"), locks.prune(false));
            assertEquals(1, rowsNamed(db, "m/fenced"), "within the margin the row stays");
            try (LockHandle h = locks.lock("m/fenced").acquire(WAIT)) {
                assertEquals(token + 1, h.fencingToken(), "the row counts on");
            }
        }
    }

    /**
     * A held lock's row stays (exclusive, shared, a semaphore's permit), with its token, and so does
     * a free one's when it is taken between prunes; dry runs name only the free.
     */
    @Test
    void aHeldLocksRowIsNeverRemoved() throws Exception {
        String db = "prune_held";
        String uri = uri(db, "0s");
        try (LockProvider holder = LockProvider.open(uri); LockProvider pruner = LockProvider.open(uri)) {
            try (LockHandle free = holder.lock("h/free").acquire(WAIT)) {
                free.fencingToken();
            }
            LockHandle held = holder.lock("h/held").acquire(WAIT);
            long heldToken = held.fencingToken();
            LockHandle reader = sharedLocks() ? holder.readWriteLock("h/read").readLock().acquire(WAIT)
                    : holder.lock("h/read").acquire(WAIT);
            reader.fencingToken();
            LockHandle permit = holder.semaphore("h/permits", 2).acquire(WAIT);
            permit.fencingToken();
            Thread.sleep(CLOCK_TICK_MILLIS);

            assertEquals(List.of("kanuki_locks row of 'h/free'"), pruner.prune(true), "a dry run names the free only");
            assertEquals(1, rowsNamed(db, "h/free"), "a dry run removes nothing");
            assertEquals(List.of("kanuki_locks row of 'h/free'"), pruner.prune(false));
            assertEquals(0, rowsNamed(db, "h/free"));
            assertEquals(1, rowsNamed(db, "h/held"), "a held lock's row stays");
            assertEquals(1, rowsNamed(db, "h/read"), "a read-held lock's row stays");
            assertEquals(1, rowsNamed(db, "h/permits"), "a held permit's row stays");
            assertTrue(held.isHeld() && reader.isHeld() && permit.isHeld());
            assertEquals(heldToken, pruner.status("h/held").lastFencingToken());

            held.close();
            reader.close();
            permit.close();
            assertTrue(pruner.prune(false).size() >= 3, "released, their rows can go");
            try (LockHandle again = holder.lock("h/held").acquire(WAIT)) {
                assertTrue(again.fencingToken() > heldToken);
            }
        }
    }

    /**
     * Threads take a few names over and over, each asking for its token, while another thread
     * prunes the table again and again with no margin: every name's tokens still increase
     * strictly, whichever statement issued them.
     */
    @Test
    void pruningWhileOthersLockKeepsTokensIncreasing() throws Exception {
        String uri = uri("prune_race", "0s");
        List<String> problems = new CopyOnWriteArrayList<>();
        AtomicBoolean done = new AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger pruned = new java.util.concurrent.atomic.AtomicInteger();
        try (LockProvider a = LockProvider.open(uri); LockProvider b = LockProvider.open(uri);
             LockProvider pruner = LockProvider.open(uri)) {
            Map<String, Long> last = new ConcurrentHashMap<>();
            List<Thread> threads = new ArrayList<>();
            for (LockProvider p : List.of(a, b)) {
                for (int t = 0; t < 2; t++) {
                    int seed = t;
                    threads.add(new Thread(() -> {
                        // at least 150 each, and on until the pruner has removed rows a few times
                        for (int i = 0; (i < 150 || pruned.get() < 3) && i < 100_000 && problems.isEmpty(); i++) {
                            String name = "r/" + ((i + seed) % 3);
                            // try and wait both: the eager try, the eager wait and the on-demand write
                            try (LockHandle h = i % 2 == 0 ? p.lock(name).acquire(WAIT)
                                    : p.lock(name).tryAcquire().orElse(null)) {
                                if (h == null) {
                                    continue;
                                }
                                long token = h.fencingToken();
                                Long before = last.put(name, token);
                                if (before != null && token <= before) {
                                    problems.add(name + ": token " + token + " after " + before);
                                }
                            }
                        }
                    }));
                }
            }
            Thread pruning = new Thread(() -> {
                try {
                    while (!done.get()) {
                        pruned.addAndGet(pruner.prune(false).size());
                    }
                } catch (RuntimeException e) {
                    problems.add("prune failed: " + e);
                }
            });
            pruning.start();
            threads.forEach(Thread::start);
            for (Thread t : threads) {
                t.join();
            }
            done.set(true);
            pruning.join();
            assertEquals(List.of(), problems);
            assertFalse(last.isEmpty());
            assertTrue(pruned.get() >= 3, "rows were pruned under the lockers: " + pruned);
        }
    }

    private long rowsNamed(String database, String prefix) throws SQLException {
        try (Connection c = server().connect(database);
             PreparedStatement ps = c.prepareStatement("SELECT count(*) FROM kanuki_locks WHERE name LIKE ?")) {
            ps.setString(1, prefix + "%");
            try (ResultSet rs = ps.executeQuery()) {
                rs.next();
                return rs.getLong(1);
            }
        }
    }
}
