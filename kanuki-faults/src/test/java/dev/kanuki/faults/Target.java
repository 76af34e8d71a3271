package dev.kanuki.faults;

import dev.kanuki.LeaseKind;
import dev.kanuki.testkit.ServerProcess;
import dev.kanuki.testkit.TcpProxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One backend under test: its name in the table, how to get its URI, its kind of lease, the bound
 * within which its documentation says a dead holder's lock is free again, and which violations
 * its documentation states under which fault. A new backend joins the suite with a few lines in
 * {@link FaultSuiteTest#targets}: {@link #server} or {@link #files}, then
 * {@link #documents(String, String)} for every fault its page says it does not survive.
 */
final class Target {
    /** The lease every ttl target runs with: short, so that the suite spans several. */
    static final Duration LEASE = Duration.ofMillis(2000);
    /** Slack on every documented bound: worker JVMs on a loaded 2-vCPU machine. */
    static final Duration SLACK = Duration.ofSeconds(8);

    private final String name;
    private final LeaseKind kind;
    private final Duration bound;
    private final Function<Path, String> uriIn;
    private final Supplier<? extends ServerProcess> server;
    private final Map<String, String> documented = new HashMap<>();

    private Target(String name, LeaseKind kind, Duration bound, Function<Path, String> uriIn,
            Supplier<? extends ServerProcess> server) {
        this.name = name;
        this.kind = kind;
        this.bound = bound;
        this.uriIn = uriIn;
        this.server = server;
    }

    /**
     * A backend whose state lives in files of a directory (the file strategies, SQLite).
     *
     * @param bound the documented time after a holder's death until its lock is free
     * @param uriIn the URI for a lock directory (or a directory to keep the database in)
     */
    static Target files(String name, LeaseKind kind, Duration bound, Function<Path, String> uriIn) {
        return new Target(name, kind, bound, uriIn, null);
    }

    /**
     * A backend with a server the test kit runs.
     *
     * @param server starts (once) and returns the server
     * @param uri the URI for that server
     */
    static <S extends ServerProcess> Target server(String name, LeaseKind kind, Duration bound, Supplier<S> server,
            Function<S, String> uri) {
        Supplier<S> once = memoize(server);
        return new Target(name, kind, bound, dir -> uri.apply(once.get()), once);
    }

    /** Declares a violation the backend's documentation states under {@code fault}. */
    Target documents(String fault, String reason) {
        documented.put(fault, reason);
        if (fault.equals(FaultSuiteTest.PAUSE)) { // frozen at its acquisition or renewal: the same pause past the lease
            documented.put(FaultSuiteTest.PAUSE_ACQUIRE, reason);
            documented.put(FaultSuiteTest.PAUSE_RENEW, reason);
        }
        return this;
    }

    String name() {
        return name;
    }

    LeaseKind kind() {
        return kind;
    }

    boolean ttl() {
        return kind == LeaseKind.TTL;
    }

    boolean isFiles() {
        return server == null;
    }

    boolean isFileStrategy() {
        return name.startsWith("file:");
    }

    /** @return the documented reason of a violation under {@code fault}, or null when none is documented */
    String documented(String fault) {
        return documented.get(fault);
    }

    /** @return the URI; for file targets one in {@code dir} (each trial gets its own directory) */
    String uri(Path dir) {
        return uriIn.apply(dir);
    }

    ServerProcess server() {
        return server.get();
    }

    /** @return the URI with the server's address replaced by the proxy's */
    String uriThrough(TcpProxy proxy, Path dir) {
        ServerProcess s = server();
        return uri(dir).replace(s.host() + ":" + s.port(), proxy.host() + ":" + proxy.port());
    }

    /** @return the documented bound after a holder's death until its lock is free, without slack */
    Duration documentedBound() {
        return bound;
    }

    /** @return the bound the suite checks: the documented one plus {@link #SLACK} */
    Duration recoveryBound() {
        return bound.plus(SLACK);
    }

    private static <S> Supplier<S> memoize(Supplier<S> s) {
        Object[] cell = new Object[1];
        return () -> {
            synchronized (cell) {
                if (cell[0] == null) {
                    cell[0] = s.get();
                }
                @SuppressWarnings("unchecked")
                S value = (S) cell[0];
                return value;
            }
        };
    }

    @Override
    public String toString() {
        return name;
    }
}
