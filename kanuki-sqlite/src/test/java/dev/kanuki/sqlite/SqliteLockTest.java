package dev.kanuki.sqlite;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockLostException;
import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.contract.HolderProcess;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** What only the SQLite backend does: one database per name, its record, and a hostile directory. */
@SuppressWarnings("try") // HolderProcess.close() may throw InterruptedException; some resources are only held
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SqliteLockTest {
    @TempDir
    Path tempDir;

    private String uri() {
        return "sqlite:" + tempDir.resolve("locks.db");
    }

    private Path databaseOf(String name) {
        return tempDir.resolve("locks.db").resolve(SqliteNames.lockFile(name));
    }

    @Test
    void unrelatedNamesDoNotBlockEachOther() throws Exception {
        try (LockProvider locks = LockProvider.open(uri());
             HolderProcess holder = HolderProcess.start(uri(), "busy", "exclusive", tempDir.resolve("h.err"))) {
            long start = System.nanoTime();
            Optional<LockHandle> other = locks.lock("idle").tryAcquire();
            assertTrue(other.isPresent(), "a lock held elsewhere blocked an unrelated name");
            // blocked, it would wait out the busy timeout; a loaded machine may be slow, not that slow
            assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
            other.get().close();
            assertTrue(locks.lock("busy").tryAcquire().isEmpty());
        }
    }

    @Test
    void theTokenAndOwnerAreCommittedBeforeTheLockIsHeld() throws Exception {
        try (LockProvider locks = LockProvider.open(uri());
             LockHandle h = locks.lock("record").acquire(Duration.ofSeconds(5));
             Connection raw = DriverManager.getConnection("jdbc:sqlite:" + databaseOf("record"));
             Statement s = raw.createStatement();
             ResultSet rs = s.executeQuery("SELECT name, token, owner_pid FROM kanuki_lock")) {
            // another connection sees the committed record while the lock is held
            assertTrue(rs.next());
            assertEquals("record", rs.getString(1));
            assertEquals(h.fencingToken(), rs.getLong(2));
            assertEquals(ProcessHandle.current().pid(), rs.getLong(3));
        }
    }

    @Test
    void statusNamesAHolderInAnotherProcess() throws Exception {
        try (LockProvider locks = LockProvider.open(uri());
             HolderProcess holder = HolderProcess.start(uri(), "status/other", "exclusive", tempDir.resolve("h.err"))) {
            LockStatus status = locks.status("status/other");
            assertEquals(LockStatus.State.HELD, status.state());
            assertEquals(holder.pid(), status.owner().orElseThrow().pid());
            assertEquals(holder.token(), status.lastFencingToken());
            holder.close();
            assertEquals(LockStatus.State.FREE, locks.status("status/other").state());
        }
        try (LockProvider locks = LockProvider.open(uri())) {
            LockStatus never = locks.status("never/used");
            assertEquals(LockStatus.State.FREE, never.state());
            assertFalse(Files.exists(databaseOf("never/used")), "status must not create databases");
        }
    }

    @Test
    void removedDatabaseIsNoticedAndTheHandleLost() throws Exception {
        try (LockProvider locks = LockProvider.open(uri())) {
            LockHandle h = locks.lock("doomed").acquire(Duration.ofSeconds(5));
            Path db = databaseOf("doomed");
            for (String suffix : List.of("", "-wal", "-shm")) {
                Files.deleteIfExists(Path.of(db + suffix));
            }
            LockLostException lost = h.lost().get(10, TimeUnit.SECONDS);
            assertTrue(lost.getMessage().contains("doomed"));
            assertThrows(LockLostException.class, h::verify);
            h.close();
            try (LockHandle again = locks.lock("doomed").acquire(Duration.ofSeconds(5))) {
                again.verify(); // a fresh database at the path
            }
        }
    }

    @Test
    void plantedSymbolicLinkIsNeverFollowed() throws Exception {
        Path victim = Files.writeString(tempDir.resolve("victim.txt"), "precious");
        try (LockProvider locks = LockProvider.open(uri())) {
            Files.createSymbolicLink(databaseOf("planted"), victim);
            LockBackendException e = assertThrows(LockBackendException.class, () -> locks.lock("planted").tryAcquire());
            assertTrue(e.getMessage().contains("symbolic link"), e.getMessage());
            assertEquals(LockStatus.State.UNKNOWN, locks.status("planted").state());
        }
        assertEquals("precious", Files.readString(victim));
    }

    @Test
    void aDatabaseOfAnotherNameIsReportedNotShared() throws Exception {
        try (LockProvider locks = LockProvider.open(uri())) {
            locks.lock("original").acquire(Duration.ofSeconds(5)).close();
        } // the last connection's close moves the WAL into the database file
        Files.copy(databaseOf("original"), databaseOf("impostor"));
        try (LockProvider locks = LockProvider.open(uri())) {
            LockBackendException e = assertThrows(LockBackendException.class, () -> locks.lock("impostor").tryAcquire());
            assertTrue(e.getMessage().contains("belongs to lock 'original'"), e.getMessage());
            assertEquals(LockStatus.State.UNKNOWN, locks.status("impostor").state());
        }
    }

    @Test
    void journalModeAndSynchronousAreOptions() throws Exception {
        try (LockProvider locks = LockProvider.open(uri() + "?journal=delete&synchronous=full")) {
            locks.lock("rollback-journal").acquire(Duration.ofSeconds(5)).close();
        }
        try (Connection raw = DriverManager.getConnection("jdbc:sqlite:" + databaseOf("rollback-journal"));
             Statement s = raw.createStatement(); ResultSet rs = s.executeQuery("PRAGMA journal_mode")) {
            rs.next();
            assertEquals("delete", rs.getString(1));
        }
        try (LockProvider locks = LockProvider.open(uri());
             LockHandle h = locks.lock("write-ahead").acquire(Duration.ofSeconds(5))) {
            h.verify();
        }
        try (Connection raw = DriverManager.getConnection("jdbc:sqlite:" + databaseOf("write-ahead"));
             Statement s = raw.createStatement(); ResultSet rs = s.executeQuery("PRAGMA journal_mode")) {
            rs.next();
            assertEquals("wal", rs.getString(1), "WAL is the default");
        }
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LockProvider.open(uri() + "?journal=memory"))
                .getMessage().contains("journal"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LockProvider.open(uri() + "?busyTimeout=5"))
                .getMessage().contains("busyTimeout"));
    }

    @Test
    void aFileAtThePathIsRejectedWithAHint() throws Exception {
        Path file = Files.writeString(tempDir.resolve("plain.db"), "");
        LockBackendException e = assertThrows(LockBackendException.class, () -> LockProvider.open("sqlite:" + file));
        assertTrue(e.hint().contains(".d"), e.hint());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LockProvider.open("sqlite:"))
                .getMessage().contains("path"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> LockProvider.open("sqlite://otherhost/x"))
                .getMessage().contains("local"));
        try (LockProvider p = LockProvider.open("sqlite://" + tempDir.resolve("url-style"))) {
            p.lock("x").acquire(Duration.ofSeconds(5)).close();
        }
        assertTrue(Files.isDirectory(tempDir.resolve("url-style")));
    }

    @Test
    void hostileNamesGetSafeFileNames() throws Exception {
        try (LockProvider locks = LockProvider.open(uri())) {
            for (String name : List.of("../../etc/passwd", "..", "/abs", "a\\b", "a_b", "\u0000".replace("\u0000", "nul"),
                    "CON", ".hidden", "名前", "x".repeat(1024))) {
                locks.lock(name).acquire(Duration.ofSeconds(5)).close();
            }
        }
        try (Stream<Path> files = Files.list(tempDir.resolve("locks.db"))) {
            files.forEach(f -> {
                String n = f.getFileName().toString();
                assertTrue(n.matches("[A-Za-z0-9_-][A-Za-z0-9._-]{0,80}\\.db(-wal|-shm|-journal)?"), "unsafe file name " + n);
            });
        }
        try (Stream<Path> top = Files.list(tempDir)) {
            assertEquals(List.of(tempDir.resolve("locks.db")), top.toList());
        }
    }

    @Test
    void listShowsEveryNameWithItsHolder() throws Exception {
        try (LockProvider locks = LockProvider.open(uri());
             HolderProcess holder = HolderProcess.start(uri(), "list/held", "exclusive", tempDir.resolve("l.err"))) {
            locks.lock("list/free").acquire(Duration.ofSeconds(5)).close();
            locks.semaphore("list/permits", 2).acquire(Duration.ofSeconds(5)).close();
            java.util.Map<String, LockStatus> byName = new java.util.HashMap<>();
            locks.list().forEach(st -> byName.put(st.name(), st));
            assertEquals(java.util.Set.of("list/held", "list/free"), byName.keySet(), "permits are not locks");
            assertEquals(LockStatus.State.HELD, byName.get("list/held").state());
            assertEquals(holder.pid(), byName.get("list/held").owner().orElseThrow().pid());
            assertEquals(LockStatus.State.FREE, byName.get("list/free").state());
            assertThrows(UnsupportedOperationException.class, () -> locks.breakLock("list/held", true),
                    "an SQLite lock belongs to its holder's process; nothing outside can break it");
        }
    }

    /**
     * Regression: several processes creating one lock database at once. Switching a brand-new
     * file to WAL answers SQLITE_BUSY at once (no busy wait) while another process does the same;
     * that must read as "busy", never fail the acquisition.
     */
    @Test
    void manyProcessesCreatingLockDatabasesAtOnce() throws Exception {
        Path dir = Files.createDirectories(tempDir.resolve("race"));
        Path start = tempDir.resolve("start");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<Process> racers = new java.util.ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                ProcessBuilder builder = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                        CreateRaceMain.class.getName(), dir.toString(), start.toString(), "100");
                builder.redirectErrorStream(true);
                racers.add(builder.start());
            }
            for (Process p : racers) {
                String first = new java.io.BufferedReader(new java.io.InputStreamReader(p.getInputStream())).readLine();
                assertEquals("READY", first);
            }
            Files.createFile(start);
            for (Process p : racers) {
                assertTrue(p.waitFor(60, TimeUnit.SECONDS), "a racer hung");
                assertEquals(0, p.exitValue(), "a racer failed: " + new String(p.getInputStream().readAllBytes()));
            }
        } finally {
            racers.forEach(Process::destroyForcibly);
        }
    }

    /** The rollback-journal mode: readers ({@code status}) must not make a holder's commit fail. */
    @Test
    void rollbackJournalModeUnderContentionAndStatusReaders() throws Exception {
        String uri = uri() + "?journal=delete";
        try (LockProvider watcher = LockProvider.open(uri)) {
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            Thread reader = new Thread(() -> {
                while (!stop.get()) {
                    try {
                        watcher.status("journal/delete");
                    } catch (RuntimeException e) {
                        // the holders' view is what is checked
                    }
                }
            });
            reader.start();
            try {
                var result = dev.kanuki.torture.Torture.run(new dev.kanuki.torture.TortureOptions(uri, "journal/delete",
                        3, 100, tempDir.resolve("torture"), Duration.ZERO, Duration.ofSeconds(60)), null);
                assertTrue(result.workerErrors().isEmpty(), "workers failed: " + result.workerErrors());
                assertEquals(result.expected(), result.actual());
                assertEquals(0, result.overlaps());
                assertEquals(0, result.fencingViolations());
            } finally {
                stop.set(true);
                reader.join();
            }
        }
    }

    /**
     * Found by the fault suite: a hard link to another file planted at a lock database's side
     * file ({@code -shm}, {@code -wal}) had SQLite overwrite that file. Refused now, the victim
     * untouched; at the database itself too.
     */
    @Test
    void aHardLinkPlantedAtALockDatabaseOrItsSideFilesIsRefused() throws Exception {
        byte[] precious = "precious".getBytes(java.nio.charset.StandardCharsets.UTF_8);
        for (String suffix : List.of("-shm", "-wal", "")) {
            try (LockProvider locks = LockProvider.open(uri())) {
                locks.lock("linked" + suffix).acquire(Duration.ofSeconds(5)).close();
            }
            Path db = databaseOf("linked" + suffix);
            Path planted = db.resolveSibling(db.getFileName() + suffix);
            Path victim = Files.write(tempDir.resolve("victim" + suffix), precious);
            if (suffix.isEmpty()) {
                Files.delete(db);
            } else {
                Files.deleteIfExists(planted);
            }
            Files.createLink(planted, victim);
            try (LockProvider locks = LockProvider.open(uri())) {
                LockBackendException e = assertThrows(LockBackendException.class,
                        () -> locks.lock("linked" + suffix).tryAcquire(), suffix);
                assertTrue(String.valueOf(e.getMessage()).contains("hard link")
                        || String.valueOf(e.getCause()).contains("hard link"), e.toString());
            }
            assertTrue(java.util.Arrays.equals(precious, Files.readAllBytes(victim)), "the victim was written through " + planted);
        }
    }
}
