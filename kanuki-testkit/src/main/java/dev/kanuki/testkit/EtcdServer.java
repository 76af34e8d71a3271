package dev.kanuki.testkit;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A real {@code etcd} member for tests, on free loopback ports (client and peer) with its data
 * in a temporary directory. One member alone is a one-node cluster ({@link #start()}); three
 * started together by {@link EtcdCluster} form a three-member cluster. Never the machine's own
 * etcd on 2379.
 *
 * <p>The binary is looked up in {@code -Dkanuki.testkit.etcd.bin=DIR}, then {@code /usr/bin},
 * {@code /usr/local/bin} and {@code PATH}; when missing, {@link #start()} throws a
 * {@link MissingServerException} naming the Debian package {@code etcd-server}.
 */
public final class EtcdServer extends KeyValueServerProcess {
    private static final SharedServer<EtcdServer> SHARED = new SharedServer<>(EtcdServer::start);
    private final Path binary;
    private final String memberName;
    private final int peerPort;
    private volatile String initialCluster;

    EtcdServer(Path binary, String memberName) {
        super("etcd", "etcd");
        this.binary = binary;
        this.memberName = memberName;
        this.peerPort = freePort();
        this.initialCluster = memberName + "=" + peerUrl();
    }

    /**
     * Starts a new one-member cluster that the caller owns: close it when done.
     *
     * @return a running server
     * @throws MissingServerException when etcd is not installed
     */
    public static EtcdServer start() {
        EtcdServer server = new EtcdServer(findBinary(), "solo");
        server.firstStart();
        return server;
    }

    /**
     * The server shared by the tests of this JVM; tests that stop or pause it start their own.
     *
     * @return the running shared server
     */
    public static EtcdServer shared() {
        return SHARED.get();
    }

    static Path findBinary() {
        List<Path> candidates = new ArrayList<>();
        String configured = System.getProperty("kanuki.testkit.etcd.bin");
        if (configured != null && !configured.isBlank()) {
            candidates.add(Path.of(configured, "etcd"));
        }
        candidates.add(Path.of("/usr/bin/etcd"));
        candidates.add(Path.of("/usr/local/bin/etcd"));
        Path found = findExecutable(candidates);
        if (found == null) {
            found = onPath("etcd");
        }
        if (found == null) {
            throw new MissingServerException("etcd", "looked in -Dkanuki.testkit.etcd.bin, /usr/bin, /usr/local/bin and PATH",
                    "etcd-server");
        }
        return found;
    }

    String peerUrl() {
        return "http://" + HOST + ":" + peerPort;
    }

    String memberName() {
        return memberName;
    }

    void joinCluster(String initialCluster) {
        this.initialCluster = initialCluster;
    }

    /** {@return {@code http://127.0.0.1:PORT}, the client endpoint} */
    public String endpoint() {
        return "http://" + HOST + ":" + port();
    }

    /** {@return {@code etcd://127.0.0.1:PORT}} */
    public String kanukiUri() {
        return "etcd://" + HOST + ":" + port();
    }

    /**
     * Asks the member whether it leads its cluster, through the JSON gateway's
     * {@code /v3/maintenance/status} (its {@code header.member_id} against its {@code leader}).
     *
     * @return true when it answers within a second and names itself the leader
     */
    public boolean isLeader() {
        try {
            java.net.HttpURLConnection http = (java.net.HttpURLConnection) java.net.URI.create(
                    endpoint() + "/v3/maintenance/status").toURL().openConnection();
            http.setConnectTimeout(1000);
            http.setReadTimeout(1000);
            http.setRequestMethod("POST");
            http.setDoOutput(true);
            http.getOutputStream().write("{}".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String body;
            try (java.io.InputStream in = http.getInputStream()) {
                body = new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            }
            java.util.regex.Matcher member = java.util.regex.Pattern.compile("\"member_id\":\"?(\\d+)").matcher(body);
            java.util.regex.Matcher leader = java.util.regex.Pattern.compile("\"leader\":\"?(\\d+)").matcher(body);
            return member.find() && leader.find() && member.group(1).equals(leader.group(1));
        } catch (IOException | RuntimeException e) {
            return false; // not answering: not a leader we could use
        }
    }

    @Override
    void initialize() throws IOException {
        subdirectory("data");
    }

    @Override
    List<String> serverCommand(int port) {
        String client = "http://" + HOST + ":" + port;
        return List.of(binary.toString(), "--name", memberName, "--data-dir", dataDirectory().toString(),
                "--listen-client-urls", client, "--advertise-client-urls", client,
                "--listen-peer-urls", peerUrl(), "--initial-advertise-peer-urls", peerUrl(),
                "--initial-cluster", initialCluster, "--initial-cluster-state", "new",
                "--initial-cluster-token", "kanuki-test-" + Integer.toHexString(initialCluster.hashCode()), // one per cluster
                "--logger", "zap", "--log-outputs", logFile().toString());
    }

    @Override
    Path logFile() {
        return directory.resolve("etcd.log");
    }

    @Override
    String readyMarker() {
        return "serving client traffic";
    }

    @Override
    void requestFastShutdown(Process process) throws IOException {
        signal(process, "TERM");
    }

    /** {@return {@code root}, etcd's user when authentication is on (it is off here)} */
    @Override
    public String user() {
        return "root";
    }

    @Override
    String productName() {
        return "etcd";
    }

    @Override
    String kanukiScheme() {
        return "etcd";
    }
}
