package dev.kanuki.testkit;

/**
 * A server without SQL (Redis, etcd, ZooKeeper, memcached): it has no JDBC driver and no
 * databases by name, so those calls of {@link ServerProcess} refuse, naming the server; tests
 * reach it through its {@code kanukiUri()}.
 */
abstract class KeyValueServerProcess extends ServerProcess {

    KeyValueServerProcess(String kind, String serviceUser) {
        super(kind, serviceUser);
    }

    /** {@return the server's name in messages, e.g. {@code Redis}} */
    abstract String productName();

    /** Freezes the server with SIGSTOP: connections stay open, nothing answers. */
    public final void pause() {
        signalServer("STOP");
    }

    /** Resumes a {@link #pause() paused} server with SIGCONT. */
    public final void resume() {
        signalServer("CONT");
    }

    @Override
    final String jdbcScheme() {
        throw new UnsupportedOperationException(productName() + " has no JDBC driver");
    }

    /** Refuses: this server has no databases by name; use its {@code kanukiUri()}. */
    @Override
    public final String createDatabase(String name) {
        throw new UnsupportedOperationException(productName() + " has no databases by name; use kanukiUri()");
    }

    /** Refuses: this server has no JDBC connection. */
    @Override
    public final java.sql.Connection connect(String database) {
        throw new UnsupportedOperationException(productName() + " has no JDBC connection");
    }
}
