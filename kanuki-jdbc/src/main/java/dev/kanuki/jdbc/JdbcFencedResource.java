package dev.kanuki.jdbc;

import dev.kanuki.FencedResource;
import dev.kanuki.FencedWriteRefusedException;
import dev.kanuki.LockBackendException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * A {@link FencedResource} that is one row of a table: {@code (resource, fence, content)}. A write
 * is {@code UPDATE ... SET fence = :token, content = :value WHERE resource = :name AND fence < :token}
 * (an {@code INSERT} the first time), one atomic statement, so a writer whose lock was lost and
 * whose token is below the row's is refused, whenever it was paused. Works on PostgreSQL,
 * MySQL/MariaDB and SQLite.
 *
 * <pre>{@code
 * FencedResource<byte[]> report = JdbcFencedResource.open(dataSource, "nightly-report");
 * try (LockHandle h = locks.lock("nightly-report").acquire(Duration.ofSeconds(5))) {
 *     report.write(h, render());               // FencedWriteRefusedException if a newer holder wrote
 * }
 * }</pre>
 *
 * <p>The same pattern protects an application's own rows: add a {@code fence BIGINT} column and
 * make every write {@code ... WHERE id = ? AND fence < ?} setting {@code fence} to the writer's
 * token; zero rows updated means the write was refused.
 */
public final class JdbcFencedResource implements FencedResource<byte[]> {
    /** The table used when none is named. */
    public static final String DEFAULT_TABLE = "kanuki_fenced";
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,62}");
    private final DataSource dataSource;
    private final String table;
    private final String resource;

    private JdbcFencedResource(DataSource dataSource, String table, String resource) {
        this.dataSource = dataSource;
        this.table = table;
        this.resource = resource;
    }

    /**
     * Opens the resource {@code resource} in the table {@value #DEFAULT_TABLE}, creating the table
     * when it does not exist.
     *
     * @param dataSource the database
     * @param resource the row's name, at most 255 characters
     * @return the resource
     * @throws LockBackendException when the database cannot be reached or the table not created
     */
    public static JdbcFencedResource open(DataSource dataSource, String resource) {
        return open(dataSource, DEFAULT_TABLE, resource);
    }

    /**
     * Opens the resource {@code resource} in {@code table}, creating the table when it does not exist.
     *
     * @param dataSource the database
     * @param table a plain SQL identifier (letters, digits, underscores)
     * @param resource the row's name, at most 255 characters
     * @return the resource
     * @throws IllegalArgumentException when the table name is not a plain identifier or the name is too long
     * @throws LockBackendException when the database cannot be reached or the table not created
     */
    public static JdbcFencedResource open(DataSource dataSource, String table, String resource) {
        Objects.requireNonNull(dataSource, "dataSource");
        if (table == null || !IDENTIFIER.matcher(table).matches()) {
            throw new IllegalArgumentException("table name '" + table + "' is not a plain SQL identifier");
        }
        if (resource == null || resource.isEmpty() || resource.length() > 255) {
            throw new IllegalArgumentException("resource name must have 1 to 255 characters");
        }
        JdbcFencedResource r = new JdbcFencedResource(dataSource, table, resource);
        r.createTable();
        return r;
    }

    private void createTable() {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            String product = c.getMetaData().getDatabaseProductName().toLowerCase(Locale.ROOT);
            String blob = product.contains("postgres") ? "BYTEA" : product.contains("mysql") || product.contains("mariadb")
                    ? "LONGBLOB" : "BLOB";
            s.execute("CREATE TABLE IF NOT EXISTS " + table + " (resource VARCHAR(255) NOT NULL PRIMARY KEY,"
                    + " fence BIGINT NOT NULL, content " + blob + ")");
        } catch (SQLException e) {
            // Two processes creating the table at once: PostgreSQL's IF NOT EXISTS can still fail
            // for the second. The table is then there; anything else is a real failure.
            if (!tableExists()) {
                throw failed("create the table " + table, e);
            }
        }
    }

    private boolean tableExists() {
        try (Connection c = dataSource.getConnection(); Statement s = c.createStatement()) {
            s.executeQuery("SELECT 1 FROM " + table + " WHERE 1 = 0").close();
            return true;
        } catch (SQLException e) {
            return false;
        }
    }

    @Override
    public void write(long token, byte[] value) {
        Objects.requireNonNull(value, "value");
        try (Connection c = dataSource.getConnection()) {
            c.setAutoCommit(true);
            if (update(c, token, value)) {
                return;
            }
            try (PreparedStatement insert = c.prepareStatement(
                    "INSERT INTO " + table + " (resource, fence, content) VALUES (?, ?, ?)")) {
                insert.setString(1, resource);
                insert.setLong(2, token);
                insert.setBytes(3, value);
                insert.executeUpdate();
                return;
            } catch (SQLException e) {
                // the row exists (a duplicate key): compare with it once more below
            }
            if (!update(c, token, value)) {
                throw new FencedWriteRefusedException(describe(), token, read(c).map(Fenced::token).orElse(-1L));
            }
        } catch (SQLException e) {
            throw failed("write " + describe(), e);
        }
    }

    private boolean update(Connection c, long token, byte[] value) throws SQLException {
        try (PreparedStatement update = c.prepareStatement(
                "UPDATE " + table + " SET fence = ?, content = ? WHERE resource = ? AND fence < ?")) {
            update.setLong(1, token);
            update.setBytes(2, value);
            update.setString(3, resource);
            update.setLong(4, token);
            return update.executeUpdate() == 1;
        }
    }

    @Override
    public Optional<Fenced<byte[]>> read() {
        try (Connection c = dataSource.getConnection()) {
            return read(c);
        } catch (SQLException e) {
            throw failed("read " + describe(), e);
        }
    }

    private Optional<Fenced<byte[]>> read(Connection c) throws SQLException {
        try (PreparedStatement select = c.prepareStatement("SELECT fence, content FROM " + table + " WHERE resource = ?")) {
            select.setString(1, resource);
            try (ResultSet rs = select.executeQuery()) {
                return rs.next() ? Optional.of(new Fenced<>(rs.getLong(1), rs.getBytes(2))) : Optional.empty();
            }
        }
    }

    private String describe() {
        return "row '" + resource + "' of " + table;
    }

    private static LockBackendException failed(String what, SQLException e) {
        return new LockBackendException("cannot " + what + ": " + e.getMessage(),
                "check that the database is reachable and the user may use the table", e);
    }

    @Override
    public String toString() {
        return describe();
    }
}
