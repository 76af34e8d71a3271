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

    /** @return the members, in a fixed order */
    public List<EtcdServer> members() {
        return members;
    }

    /** @return {@code etcd://H:P1,H:P2,H:P3} */
    public String kanukiUri() {
        return "etcd://" + members.stream().map(m -> m.host() + ":" + m.port()).collect(Collectors.joining(","));
    }

    @Override
    public void close() {
        members.forEach(EtcdServer::close);
    }
}
