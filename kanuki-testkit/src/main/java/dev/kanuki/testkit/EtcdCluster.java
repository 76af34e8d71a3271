package dev.kanuki.testkit;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.stream.Collectors;

/**
 * Three real {@code etcd} members forming one cluster on loopback, for tests that kill a member
 * or take the quorum away. The members start together (each waits for a quorum before it says it
 * is ready).
 */
public final class EtcdCluster implements AutoCloseable {
    private final List<EtcdServer> members;

    private EtcdCluster(List<EtcdServer> members) {
        this.members = members;
    }

    /**
     * Starts three members that the caller owns: close the cluster when done.
     *
     * @return the running cluster
     * @throws MissingServerException when etcd is not installed
     */
    public static EtcdCluster start() {
        Path binary = EtcdServer.findBinary();
        List<EtcdServer> members = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            members.add(new EtcdServer(binary, "m" + i));
        }
        String initial = members.stream().map(m -> m.memberName() + "=" + m.peerUrl()).collect(Collectors.joining(","));
        members.forEach(m -> m.joinCluster(initial));
        // One thread each: a member is ready only once a quorum runs (the common pool may have one thread).
        java.util.concurrent.ExecutorService starters = java.util.concurrent.Executors.newFixedThreadPool(members.size());
        try {
            List<CompletableFuture<Void>> starting = new ArrayList<>();
            for (EtcdServer m : members) {
                starting.add(CompletableFuture.runAsync(m::firstStart, starters));
            }
            CompletableFuture.allOf(starting.toArray(CompletableFuture[]::new)).join();
        } catch (RuntimeException e) {
            members.forEach(EtcdServer::close);
            throw e;
        } finally {
            starters.shutdown();
        }
        return new EtcdCluster(members);
    }

    /** {@return the members, in a fixed order} */
    public List<EtcdServer> members() {
        return members;
    }

    /**
     * Finds the member that leads the cluster now, asking each running member for its status
     * (the JSON gateway's {@code /v3/maintenance/status}: its own id and the leader's) until one
     * says it is the leader: after a leader dies, the others elect a new one within a second or
     * two, later on a loaded machine.
     *
     * @param within how long to keep asking
     * @return the leader
     * @throws IllegalStateException when no member leads within that time (no quorum)
     */
    public EtcdServer leader(java.time.Duration within) {
        long until = System.nanoTime() + within.toNanos();
        do {
            for (EtcdServer m : members) {
                if (m.isRunning() && m.isLeader()) {
                    return m;
                }
            }
            java.util.concurrent.locks.LockSupport.parkNanos(50_000_000L); // poll the members' own answer
        } while (System.nanoTime() < until);
        throw new IllegalStateException("no etcd member leads after " + within.toMillis() + "ms");
    }

    /** {@return {@code etcd://H:P1,H:P2,H:P3}} */
    public String kanukiUri() {
        return "etcd://" + members.stream().map(m -> m.host() + ":" + m.port()).collect(Collectors.joining(","));
    }

    @Override
    public void close() {
        members.forEach(EtcdServer::close);
    }
}
