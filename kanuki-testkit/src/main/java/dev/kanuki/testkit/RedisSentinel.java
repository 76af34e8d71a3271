package dev.kanuki.testkit;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.Collectors;

/**
 * A real Redis Sentinel deployment for tests: one primary, one replica and 1–3 sentinels, each a
 * {@code redis-server} process (sentinels run as {@code redis-server sentinel.conf --sentinel},
 * so the Debian package {@code redis-sentinel} is not needed) on free ports of 127.0.0.1 in
 * temporary directories, without persistence. {@link #start} returns once the replica is in sync
 * and every sentinel has found it, so a {@link #failover()} can promote it.
 *
 * <pre>{@code
 * try (RedisSentinel redis = RedisSentinel.start(1)) {
 *     LockProvider locks = LockProvider.open(redis.kanukiUri());
 *     redis.failover();
 * }
 * }</pre>
 */
public final class RedisSentinel implements AutoCloseable {
    /** The name the sentinels know the primary by. */
    public static final String MASTER_NAME = "kanuki";
    private static final Duration SETTLE = Duration.ofSeconds(60);

    private final List<RedisServer> servers = new ArrayList<>();
    private final List<RedisServer> sentinels = new ArrayList<>();

    private RedisSentinel() {
    }

    /**
     * Starts a primary, a replica and {@code sentinelCount} sentinels (quorum: a majority of them).
     *
     * @param sentinelCount 1 to 3
     * @return the running deployment, replica in sync
     * @throws MissingServerException when redis-server is not installed
     */
    public static RedisSentinel start(int sentinelCount) {
        if (sentinelCount < 1 || sentinelCount > 3) {
            throw new IllegalArgumentException("1 to 3 sentinels, not " + sentinelCount);
        }
        RedisSentinel deployment = new RedisSentinel();
        try {
            RedisServer primary = RedisServer.start();
            deployment.servers.add(primary);
            RedisServer replica = RedisServer.startReplicaOf(primary);
            deployment.servers.add(replica);
            for (int i = 0; i < sentinelCount; i++) {
                deployment.sentinels.add(RedisServer.startSentinel(primary, replica, MASTER_NAME, sentinelCount / 2 + 1));
            }
            deployment.awaitSettled(primary);
            return deployment;
        } catch (RuntimeException e) {
            deployment.close();
            throw e;
        }
    }

    /**
     * {@return {@code redis-sentinel://127.0.0.1:S1[,127.0.0.1:S2…]/kanuki}}
     */
    public String kanukiUri() {
        return "redis-sentinel://" + sentinels.stream().map(s -> ServerProcess.HOST + ":" + s.port())
                .collect(Collectors.joining(",")) + "/" + MASTER_NAME;
    }

    /** {@return the server the sentinels name as primary now} */
    public RedisServer primary() {
        int port = primaryPort();
        return servers.stream().filter(s -> s.port() == port).findFirst()
                .orElseThrow(() -> new IllegalStateException("the sentinels name an unknown primary on port " + port));
    }

    /** {@return the data servers: the first primary, then its replica} */
    public List<RedisServer> servers() {
        return List.copyOf(servers);
    }

    /** {@return the sentinel processes} */
    public List<RedisServer> sentinels() {
        return List.copyOf(sentinels);
    }

    /**
     * Makes the sentinels promote the replica ({@code SENTINEL FAILOVER}) and waits until every
     * sentinel names it as primary and it answers as one. The old primary still answers as a
     * primary until the sentinels convert it to a replica, seconds later: clients that have not
     * yet followed the sentinels still write there.
     *
     * @return the new primary
     */
    public RedisServer failover() {
        RedisServer old = primary();
        RedisServer next = servers.stream().filter(s -> s != old).findFirst().orElseThrow();
        Object answer = command(sentinels.get(0).port(), "SENTINEL", "FAILOVER", MASTER_NAME);
        if (!"OK".equals(answer)) {
            throw new IllegalStateException("SENTINEL FAILOVER answered " + answer);
        }
        awaitTrue("the sentinels name the replica on port " + next.port() + " as primary", () ->
                sentinels.stream().allMatch(s -> primaryPort(s) == next.port())
                        && info(next).contains("role:master"));
        return next;
    }

    /**
     * Sends one command to a server or sentinel and reads its answer.
     *
     * @param port the port on 127.0.0.1
     * @param args the command and its arguments
     * @return a String (simple or bulk string, or an error's text starting with {@code -}), a
     *     Long, null, or a List of those
     */
    public static Object command(int port, String... args) {
        try (Socket socket = new Socket(ServerProcess.HOST, port)) {
            socket.setSoTimeout(10_000);
            StringBuilder out = new StringBuilder("*" + args.length + "\r\n");
            for (String arg : args) {
                out.append('$').append(arg.getBytes(StandardCharsets.UTF_8).length).append("\r\n").append(arg).append("\r\n");
            }
            OutputStream os = socket.getOutputStream();
            os.write(out.toString().getBytes(StandardCharsets.UTF_8));
            os.flush();
            return read(new BufferedInputStream(socket.getInputStream()));
        } catch (IOException e) {
            throw new UncheckedIOException("Redis on port " + port + " did not answer " + String.join(" ", args), e);
        }
    }

    private static Object read(InputStream in) throws IOException {
        String line = line(in);
        char type = line.charAt(0);
        String rest = line.substring(1);
        switch (type) {
            case '+':
                return rest;
            case '-':
                return line;
            case ':':
                return Long.parseLong(rest);
            case '$': {
                int n = Integer.parseInt(rest);
                if (n < 0) {
                    return null;
                }
                byte[] data = in.readNBytes(n + 2);
                return new String(data, 0, n, StandardCharsets.UTF_8);
            }
            case '*': {
                int n = Integer.parseInt(rest);
                if (n < 0) {
                    return null;
                }
                List<Object> items = new ArrayList<>(n);
                for (int i = 0; i < n; i++) {
                    items.add(read(in));
                }
                return items;
            }
            default:
                throw new IOException("unexpected reply: " + line);
        }
    }

    private static String line(InputStream in) throws IOException {
        StringBuilder b = new StringBuilder();
        int c;
        while ((c = in.read()) != '\n') {
            if (c < 0) {
                throw new IOException("connection closed mid-reply");
            }
            if (c != '\r') {
                b.append((char) c);
            }
        }
        return b.toString();
    }

    private int primaryPort() {
        return primaryPort(sentinels.get(0));
    }

    private static int primaryPort(RedisServer sentinel) {
        Object addr = command(sentinel.port(), "SENTINEL", "GET-MASTER-ADDR-BY-NAME", MASTER_NAME);
        return addr instanceof List<?> l && l.size() == 2 ? Integer.parseInt((String) l.get(1)) : -1;
    }

    private static String info(RedisServer server) {
        return String.valueOf(command(server.port(), "INFO", "replication"));
    }

    /** The replica is in sync with {@code primary} and every sentinel knows it as a replica. */
    private void awaitSettled(RedisServer primary) {
        RedisServer replica = servers.stream().filter(s -> s != primary).findFirst().orElseThrow();
        awaitTrue("the replica on port " + replica.port() + " is in sync and known to every sentinel", () -> {
            String primaryInfo = info(primary);
            String replicaInfo = info(replica);
            if (!primaryInfo.contains("connected_slaves:1") || !replicaInfo.contains("master_link_status:up")
                    || offset(primaryInfo, "master_repl_offset") != offset(replicaInfo, "slave_repl_offset")) {
                return false;
            }
            for (RedisServer sentinel : sentinels) {
                Object replicas = command(sentinel.port(), "SENTINEL", "REPLICAS", MASTER_NAME);
                if (!(replicas instanceof List<?> l) || l.size() != 1
                        || !l.get(0).toString().contains(Integer.toString(replica.port()))
                        || l.get(0).toString().contains("disconnected") || l.get(0).toString().contains("s_down")) {
                    return false;
                }
            }
            return true;
        });
    }

    private static long offset(String info, String field) {
        for (String line : info.split("\r?\n")) {
            if (line.startsWith(field + ":")) {
                return Long.parseLong(line.substring(field.length() + 1).trim());
            }
        }
        return -1;
    }

    private static void awaitTrue(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + SETTLE.toNanos();
        RuntimeException last = null;
        while (System.nanoTime() < deadline) {
            try {
                if (condition.getAsBoolean()) {
                    return;
                }
            } catch (RuntimeException e) {
                last = e; // a server between roles may refuse a connection for a moment
            }
            ServerProcess.sleep(50);
        }
        throw new IllegalStateException("timed out after " + SETTLE.toSeconds() + "s waiting until " + what, last);
    }

    /** Stops every process of the deployment and removes their directories. */
    @Override
    public void close() {
        sentinels.forEach(RedisServer::close);
        servers.forEach(RedisServer::close);
    }
}
