package dev.kanuki.jdbc;

import java.sql.Connection;
import java.sql.SQLException;

/** Where the backend gets connections: a JDBC URL through the driver, or an application's DataSource. */
interface ConnectionSource {

    /** {@return a new connection (or one lent by the application's pool)} */
    Connection open() throws SQLException;

    /** {@return where connections go, for messages, without credentials} */
    String describe();

    /** {@return true when connections come from an application's DataSource (they may be pooled)} */
    boolean isDataSource();
}
