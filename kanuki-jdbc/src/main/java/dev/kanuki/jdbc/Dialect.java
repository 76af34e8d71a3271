package dev.kanuki.jdbc;

import java.util.Locale;

/** The databases kanuki-jdbc locks with, for {@link JdbcLocks#provider(javax.sql.DataSource, Dialect)}. */
public enum Dialect {
    /** PostgreSQL advisory locks ({@code postgresql://} URIs). */
    POSTGRESQL("postgresql"),
    /** MySQL and MariaDB user locks, {@code GET_LOCK} ({@code mysql://} and {@code mariadb://} URIs). */
    MYSQL("mysql");

    private final String scheme;

    Dialect(String scheme) {
        this.scheme = scheme;
    }

    /** {@return the URI scheme of this database's backend, e.g. {@code postgresql}} */
    public String scheme() {
        return scheme;
    }

    /**
     * Finds the dialect of a URI scheme.
     *
     * @param scheme a URI scheme: {@code postgresql}, {@code mysql} or {@code mariadb}
     * @return its dialect
     * @throws IllegalArgumentException for another scheme
     */
    public static Dialect forScheme(String scheme) {
        switch (scheme.toLowerCase(Locale.ROOT)) {
            case "postgresql":
                return POSTGRESQL;
            case "mysql":
            case "mariadb":
                return MYSQL;
            default:
                throw new IllegalArgumentException("no SQL dialect for '" + scheme + ":'; use postgresql, mysql or mariadb");
        }
    }

    SqlDialect statements(String table) {
        return this == POSTGRESQL ? new PostgresDialect(table) : new MysqlDialect(table);
    }
}
