package dev.kanuki.jdbc;

import dev.kanuki.LockProvider;
import dev.kanuki.spi.BackendProviders;
import dev.kanuki.spi.LockUri;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Lock providers over an application's own {@link DataSource} (a connection pool such as
 * HikariCP, or a driver's data source), for applications that already have one configured
 * rather than a URI.
 *
 * <pre>{@code
 * try (LockProvider locks = JdbcLocks.provider(dataSource, Dialect.POSTGRESQL);
 *      LockHandle h = locks.lock("nightly-report").acquire(Duration.ofSeconds(5))) {
 *     ...
 * }
 * }</pre>
 *
 * <p>Each held lock keeps one connection from the DataSource until it is released, and up to
 * {@code maxIdle} (default 4) idle ones are kept for the next acquisition: size the pool for
 * that. A connection that failed while it may have held a lock is aborted
 * ({@link java.sql.Connection#abort}), never handed back to the pool with a lock still on it.
 * Connections must reach the database directly or through session pooling; transaction-level
 * pooling (PgBouncer {@code pool_mode=transaction} or {@code statement}) breaks session locks, and
 * for PostgreSQL {@link #provider} refuses it with a {@link dev.kanuki.LockBackendException}: see
 * {@code docs/backends/sql.md}, Behind PgBouncer.
 */
public final class JdbcLocks {
    private JdbcLocks() {
    }

    /**
     * Opens a provider on an application's DataSource, with the default options.
     *
     * @param dataSource where connections come from; kanuki never closes it
     * @param dialect the database behind it
     * @return an open provider; close it to release its locks
     * @throws dev.kanuki.LockBackendException when the database cannot be reached, the
     *     owner-record table cannot be created, or (PostgreSQL) the connections are not pinned to
     *     one server session (a pooler in transaction mode)
     */
    public static LockProvider provider(DataSource dataSource, Dialect dialect) {
        return provider(dataSource, dialect, "");
    }

    /**
     * Opens a provider on an application's DataSource, with options.
     *
     * @param dataSource where connections come from; kanuki never closes it
     * @param dialect the database behind it
     * @param options URI-style options, e.g. {@code table=app_locks&maxIdle=8&poll=10ms}
     *     ({@code table}, {@code maxIdle}, {@code restartGrace} and the engine's {@code lease},
     *     {@code poll}; see {@link JdbcLockBackendFactory})
     * @return an open provider; close it to release its locks
     */
    public static LockProvider provider(DataSource dataSource, Dialect dialect, String options) {
        Objects.requireNonNull(dataSource, "dataSource");
        Objects.requireNonNull(dialect, "dialect");
        Objects.requireNonNull(options, "options");
        LockUri description = LockUri.parse(dialect.scheme() + ":datasource" + (options.isEmpty() ? "" : "?" + options));
        return BackendProviders.open(description.original(),
                JdbcLockBackendFactory.fromDataSource(dataSource, description, dialect, null));
    }
}
