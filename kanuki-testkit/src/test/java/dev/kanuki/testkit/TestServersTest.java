package dev.kanuki.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The test kit starts real servers, on their own ports, and survives kill and restart. */
@Tag("servers")
class TestServersTest {

    @Test
    void postgresStartsOnItsOwnPortAndSurvivesKillAndRestart() throws Exception {
        try (PostgresServer pg = PostgresServer.start()) {
            assertNotEquals(5432, pg.port(), "the system's server port");
            String db = pg.createDatabase("testkit_check");
            assertEquals(db, pg.createDatabase("testkit_check"), "creating twice is harmless");
            try (Connection c = pg.connect(db); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE t (v int)");
                s.execute("INSERT INTO t VALUES (42)");
            }
            long pid = pg.pid();
            pg.kill();
            assertFalse(pg.isRunning());
            assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "postmaster still alive");
            assertThrows(SQLException.class, () -> pg.connect(db).close());
            pg.restart();
            try (Connection c = pg.connect(db); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT v FROM t")) {
                assertTrue(rs.next());
                assertEquals(42, rs.getInt(1), "a committed row must survive a crash of the server process");
            }
            pg.stop();
            assertFalse(pg.isRunning());
            pg.restart();
            assertTrue(pg.isRunning());
            pg.close();
            assertFalse(Files.exists(pg.directory()), "close removes the directory");
        }
    }

    @Test
    void mariadbStartsOnItsOwnPortAndSurvivesKillAndRestart() throws Exception {
        try (MariaDbServer db = MariaDbServer.start()) {
            assertNotEquals(3306, db.port(), "the system's server port");
            String name = db.createDatabase("testkit_check");
            try (Connection c = db.connect(name); Statement s = c.createStatement()) {
                s.execute("CREATE TABLE t (v int) ENGINE=InnoDB");
                s.execute("INSERT INTO t VALUES (42)");
            }
            db.kill();
            assertFalse(db.isRunning());
            db.restart();
            try (Connection c = db.connect(name); Statement s = c.createStatement(); ResultSet rs = s.executeQuery("SELECT v FROM t")) {
                assertTrue(rs.next());
                assertEquals(42, rs.getInt(1), "a committed row must survive a crash of the server process");
            }
        }
    }

    @Test
    void sharedServersAreShared() {
        assertSame(PostgresServer.shared(), PostgresServer.shared());
        assertSame(MariaDbServer.shared(), MariaDbServer.shared());
    }

    @Test
    void missingBinariesNameThePackage() {
        String saved = System.getProperty("kanuki.testkit.postgres.bin");
        MissingServerException e = new MissingServerException("PostgreSQL server binaries (initdb, postgres)",
                "looked in /nowhere", "postgresql");
        assertEquals("postgresql", e.debianPackage());
        assertTrue(e.getMessage().endsWith("install the Debian package 'postgresql'"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"), "one line");
        assertEquals(saved, System.getProperty("kanuki.testkit.postgres.bin"));
    }
}
