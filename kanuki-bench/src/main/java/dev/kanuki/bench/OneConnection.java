package dev.kanuki.bench;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * A DataSource that lends one physical connection over and over, like a pool of one: {@code close()}
 * and {@code abort()} hand it back (the physical connection stays open), and while it is lent,
 * asking for another fails. kanuki (through {@code JdbcLocks.provider}) and the raw statements of
 * {@link SqlByHand} then take turns on the very same socket and server process, so a comparison
 * between them is not a comparison of two connections' luck (which vCPU each server process
 * runs on moves a loopback round trip by a third here). Single-threaded use only, apart from
 * kanuki's check that connections keep one server session: it asks for a second connection from
 * another thread, and must be refused one (as a real pool of one would make it wait) rather than
 * be lent the same session, which the check rightly takes for a pooler in transaction mode.
 */
final class OneConnection implements DataSource {
    private final Connection physical;
    private final Connection lent;
    private final java.util.concurrent.atomic.AtomicBoolean out = new java.util.concurrent.atomic.AtomicBoolean();

    OneConnection(Connection physical) {
        this.physical = physical;
        this.lent = (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    switch (method.getName()) {
                        case "close", "abort" -> {
                            out.set(false); // handed back; the benchmark closes the physical connection itself
                            return null;
                        }
                        default -> {
                            try {
                                return method.invoke(physical, args);
                            } catch (InvocationTargetException e) {
                                throw e.getCause();
                            }
                        }
                    }
                });
    }

    /** @return the connection itself, for the raw statements */
    Connection physical() {
        return physical;
    }

    @Override
    public Connection getConnection() throws java.sql.SQLException {
        if (!out.compareAndSet(false, true)) {
            throw new java.sql.SQLException("the one connection is lent already (a pool of one)");
        }
        return lent;
    }

    @Override
    public Connection getConnection(String username, String password) throws java.sql.SQLException {
        return getConnection();
    }

    @Override
    public PrintWriter getLogWriter() {
        return null;
    }

    @Override
    public void setLogWriter(PrintWriter out) {
    }

    @Override
    public void setLoginTimeout(int seconds) {
    }

    @Override
    public int getLoginTimeout() {
        return 0;
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        throw new SQLFeatureNotSupportedException();
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws java.sql.SQLException {
        throw new java.sql.SQLException("not a wrapper");
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) {
        return false;
    }
}
