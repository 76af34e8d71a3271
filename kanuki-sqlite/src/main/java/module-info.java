/**
 * kanuki's {@code sqlite:} backend. Applications use it through
 * {@code dev.kanuki.LockProvider.open("sqlite:...")}; the module exports nothing and is found as a
 * {@link dev.kanuki.spi.LockBackendFactory} service.
 */
module dev.kanuki.sqlite {
    requires dev.kanuki.core;
    requires java.sql;
    requires org.slf4j;
    // the driver is reached through java.sql.DriverManager only; requiring it puts it in the module graph
    requires org.xerial.sqlitejdbc;

    provides dev.kanuki.spi.LockBackendFactory with dev.kanuki.sqlite.SqliteLockBackendFactory;
}
