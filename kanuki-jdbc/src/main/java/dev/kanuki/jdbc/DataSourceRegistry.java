package dev.kanuki.jdbc;

import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;

/**
 * Hands an application's {@link DataSource} to the backend factory through the URI registry,
 * in this JVM only: {@link JdbcLocks} registers it under a random id and opens
 * {@code postgresql:datasource:ID}; the backend removes it when it closes.
 *
 * <p>A bridge until the engine can open a provider over a backend object directly (see the
 * report for kanuki-core: {@code EngineLockProvider.open(LockBackend, String)}); then this class
 * and the {@code datasource:} URI form go away and {@link JdbcLocks} keeps its signature.
 */
final class DataSourceRegistry {
    static final String PREFIX = "datasource:";
    private static final Map<String, DataSource> SOURCES = new ConcurrentHashMap<>();

    private DataSourceRegistry() {
    }

    static String register(DataSource dataSource) {
        String id = UUID.randomUUID().toString();
        SOURCES.put(id, dataSource);
        return id;
    }

    static DataSource get(String id) {
        DataSource ds = SOURCES.get(id);
        if (ds == null) {
            throw new IllegalArgumentException("no DataSource is registered as '" + id + "' in this JVM; make providers"
                    + " over a DataSource with dev.kanuki.jdbc.JdbcLocks.provider(dataSource, dialect)");
        }
        return ds;
    }

    static void remove(String id) {
        SOURCES.remove(id);
    }

    /** @return how many DataSources are registered (for tests: closed providers leave none behind) */
    static int size() {
        return SOURCES.size();
    }
}
