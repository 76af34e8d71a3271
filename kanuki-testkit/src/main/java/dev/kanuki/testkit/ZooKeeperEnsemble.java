package dev.kanuki.testkit;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Collectors;

/**
 * Three real ZooKeeper servers forming one ensemble on loopback, for tests that kill a member or
 * take the quorum away. The members start together, one thread each: a member is ready only once
 * a quorum runs.
 */
public final class ZooKeeperEnsemble implements AutoCloseable {
    private final List<ZooKeeperServer> members;

    private ZooKeeperEnsemble(List<ZooKeeperServer> members) {
        this.members = members;
    }

    /**
     * Starts three members that the caller owns: close the ensemble when done.
     *
     * @return the running ensemble
     * @throws MissingServerException when ZooKeeper is not installed
     */
    public static ZooKeeperEnsemble start() {
        String classpath = ZooKeeperServer.findClasspath();
        List<ZooKeeperServer> members = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            members.add(new ZooKeeperServer(classpath, i));
        }
        List<String> lines = members.stream().map(ZooKeeperServer::ensembleLine).collect(Collectors.toList());
        members.forEach(m -> m.joinEnsemble(lines));
        // A dedicated thread each, not the common pool: it may have a single thread on a small machine.
        ExecutorService starters = Executors.newFixedThreadPool(members.size());
        try {
            List<CompletableFuture<Void>> starting = new ArrayList<>();
            for (ZooKeeperServer m : members) {
                starting.add(CompletableFuture.runAsync(m::firstStart, starters));
            }
            CompletableFuture.allOf(starting.toArray(CompletableFuture[]::new)).join();
        } catch (RuntimeException e) {
            members.forEach(ZooKeeperServer::close);
            throw e;
        } finally {
            starters.shutdown();
        }
        return new ZooKeeperEnsemble(members);
    }

    /** {@return the members, in a fixed order} */
    public List<ZooKeeperServer> members() {
        return members;
    }

    /**
     * Finds the member that leads the ensemble now, asking each running member ({@code srvr}) until
     * one says it leads: after a leader dies, the others elect a new one within a few ticks, later
     * on a loaded machine.
     *
     * @param within how long to keep asking
     * @return the leader
     * @throws IllegalStateException when no member leads within that time (no quorum)
     */
    public ZooKeeperServer leader(java.time.Duration within) {
        long until = System.nanoTime() + within.toNanos();
        do {
            for (ZooKeeperServer m : members) {
                if (m.isRunning() && m.srvr().contains("Mode: leader")) {
                    return m;
                }
            }
            java.util.concurrent.locks.LockSupport.parkNanos(50_000_000L); // poll the members' own answer
        } while (System.nanoTime() < until);
        throw new IllegalStateException("no ZooKeeper member leads after " + within.toMillis() + "ms");
    }

    /** {@return {@code 127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3}} */
    public String connectString() {
        return members.stream().map(ZooKeeperServer::connectString).collect(Collectors.joining(","));
    }

    /** {@return {@code zookeeper://H:P1,H:P2,H:P3}} */
    public String kanukiUri() {
        return "zookeeper://" + connectString();
    }

    @Override
    public void close() {
        members.forEach(ZooKeeperServer::close);
    }
}
