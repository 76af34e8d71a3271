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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@code prune} on the SQL servers removes the rows of free locks and keeps every name's fencing
 * tokens strictly increasing: a removed row's last token is folded into the table's floor row, and
 * a name's next row starts above it, by every way a token is issued (on demand, with a try, with
 * a wait, to a reader). A lock that is held keeps its row. Each test has its own database, so the
 * floor of one does not lift another's tokens. {@link PostgresPruneTest}, {@link MysqlPruneTest}.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
abstract class SqlPruneContract {
    private static final Duration WAIT = Duration.ofSeconds(30);

    /** {@return the running server} */
    abstract ServerProcess server();

    /** {@return whether the backend has shared (read) locks} */
    abstract boolean sharedLocks();

    private String uri(String database) {
        return server().kanukiUri(server().createDatabase(database)) + "&restartGrace=0";
    }

    /**
     * Tokens go on above a name's last token after its row was pruned: asked for on demand by a
     * provider that never saw the name, issued with a try and with a wait by one that knows the
     * name is used with fencing, and read by a reader.
     */
    @Test
    void tokensStayIncreasingAcrossAPrune() throws Exception {
        String uri = uri("prune_tokens");
        String db = "prune_tokens";
        Map<String, Long> last = new ConcurrentHashMap<>();
        try (LockProvider locks = LockProvider.open(uri)) {
            for (String name : List.of("p/on-demand", "p/eager-try", "p/eager-wait", "p/reader")) { // reader: a writer here
                for (int i = 0; i < 5; i++) { // the later ones are issued with the acquisition: the name is fenced
                    try (LockHandle h = locks.lock(name).acquire(WAIT)) {
                        last.put(name, h.fencingToken());
                    }
                }
            }
            long highest = last.values().stream().mapToLong(Long::longValue).max().orElseThrow();
            assertEquals(5, last.get("p/reader"), "a name's tokens count from 1 in a table never pruned");

            List<String> removed = locks.prune(false);
            assertEquals(4, removed.size(), removed.toString());
            assertTrue(removed.contains("kanuki_locks row of 'p/eager-try'"), removed.toString());
            assertEquals(0, rowsNamed(db, "p/"), "the free locks' rows are gone");
            assertEquals(highest, floor(db), "the floor is the highest token pruned");

            // This provider remembers the names as fenced: its next acquisitions issue with the lock.
            try (LockHandle h = locks.lock("p/eager-try").tryAcquire().orElseThrow()) {
                assertTrue(h.fencingToken() > last.get("p/eager-try"), h.fencingToken() + " after " + last);
            }
            try (LockHandle h = locks.lock("p/eager-wait").acquire(WAIT)) {
                assertTrue(h.fencingToken() > last.get("p/eager-wait"), h.fencingToken() + " after " + last);
            }
            if (sharedLocks()) {
                try (LockHandle h = locks.readWriteLock("p/reader").readLock().acquire(WAIT)) {
                    assertTrue(h.fencingToken() >= last.get("p/reader"), "a reader sees at least the last writer's token: "
                            + h.fencingToken() + " after " + last);
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
            assertEquals(List.of(), fresh.list().stream().filter(s -> s.name().isEmpty()).toList(),
                    "the floor row is not a lock");
        }
    }

    /**
     * A held lock's row stays (exclusive, shared, a semaphore's permit), with its token, and so does
     * a free one's when it is taken between prunes; dry runs name only the free.
     */
    @Test
    void aHeldLocksRowIsNeverRemoved() throws Exception {
        String uri = uri("prune_held");
        String db = "prune_held";
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
            assertEquals(3, pruner.prune(false).size(), "released, their rows can go");
            try (LockHandle again = holder.lock("h/held").acquire(WAIT)) {
                assertTrue(again.fencingToken() > heldToken);
            }
        }
    }

    /**
     * Threads take a few names over and over, each asking for its token, while another thread
     * prunes the table again and again: every name's tokens still increase strictly, whichever
     * statement issued them.
     */
    @Test
    void pruningWhileOthersLockKeepsTokensIncreasing() throws Exception {
        String uri = uri("prune_race");
        List<String> problems = new CopyOnWriteArrayList<>();
        AtomicBoolean done = new AtomicBoolean();
        try (LockProvider a = LockProvider.open(uri); LockProvider b = LockProvider.open(uri);
             LockProvider pruner = LockProvider.open(uri)) {
            Map<String, Long> last = new ConcurrentHashMap<>();
            List<Thread> threads = new ArrayList<>();
            for (LockProvider p : List.of(a, b)) {
                for (int t = 0; t < 2; t++) {
                    int seed = t;
                    threads.add(new Thread(() -> {
                        for (int i = 0; i < 150 && problems.isEmpty(); i++) {
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
                        pruner.prune(false);
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

    private long floor(String database) throws SQLException {
        try (Connection c = server().connect(database);
             PreparedStatement ps = c.prepareStatement("SELECT token FROM kanuki_locks WHERE id = ?")) {
            ps.setString(1, SqlDialect.FLOOR_ID);
            try (ResultSet rs = ps.executeQuery()) {
                return rs.next() ? rs.getLong(1) : -1;
            }
        }
    }
}
