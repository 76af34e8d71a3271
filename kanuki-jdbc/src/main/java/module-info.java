/**
 * kanuki's {@code postgresql://}, {@code mysql://} and {@code mariadb://} backends, found as a
 * {@link dev.kanuki.spi.LockBackendFactory} service, and {@link dev.kanuki.jdbc.JdbcLocks} and
 * {@link dev.kanuki.jdbc.JdbcFencedResource} over an application's own {@code DataSource}.
 * The JDBC driver is the application's choice: any module that provides {@code java.sql.Driver}
 * (PostgreSQL's {@code org.postgresql.jdbc}, {@code org.mariadb.jdbc}) on the module path.
 */
module dev.kanuki.jdbc {
    requires transitive dev.kanuki.core;
    requires transitive java.sql;
    requires org.slf4j;

    exports dev.kanuki.jdbc;

    provides dev.kanuki.spi.LockBackendFactory with dev.kanuki.jdbc.JdbcLockBackendFactory;
}
