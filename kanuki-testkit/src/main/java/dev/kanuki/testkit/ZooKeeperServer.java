package dev.kanuki.testkit;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A real ZooKeeper server for tests: Debian's {@code zookeeper} package run as its own JVM
 * ({@code QuorumPeerMain zoo.cfg}) on a free loopback port, with its data in a temporary
 * directory. One server alone is standalone ({@link #start()}); three started together by
 * {@link ZooKeeperEnsemble} form an ensemble. The tick is 200 ms (sessions from 400 ms to 60 s),
 * the admin server is off and every four-letter command is allowed.
 *
 * <p>The jars are looked up in {@code -Dkanuki.testkit.zookeeper.lib=DIR}, then
 * {@code /usr/share/java}; when missing, {@link #start()} throws a {@link MissingServerException}
 * naming the Debian package {@code zookeeper}.
 */
public final class ZooKeeperServer extends KeyValueServerProcess {
    /** The jars the server needs, and no more: the directory holds other Netty and SLF4J versions. */
    private static final List<String> JARS = List.of("zookeeper.jar", "zookeeper-jute.jar", "slf4j-api.jar",
            "slf4j-simple.jar");
    private static final SharedServer<ZooKeeperServer> SHARED = new SharedServer<>(ZooKeeperServer::start);
    private final String classpath;
    private final int myId;
    private final int peerPort;
    private final int electionPort;
    private volatile List<String> ensembleLines = List.of();

    ZooKeeperServer(String classpath, int myId) {
        super("zookeeper", "zookeeper");
        this.classpath = classpath;
        this.myId = myId;
        this.peerPort = freePort();
        this.electionPort = freePort();
    }

    /**
     * Starts a new standalone server that the caller owns: close it when done.
     *
     * @return a running server
     * @throws MissingServerException when ZooKeeper is not installed
     */
    public static ZooKeeperServer start() {
        ZooKeeperServer server = new ZooKeeperServer(findClasspath(), 0);
        server.firstStart();
        return server;
    }

    /**
     * The server shared by the tests of this JVM; tests that stop or pause it start their own.
     *
     * @return the running shared server
     */
    public static ZooKeeperServer shared() {
        return SHARED.get();
    }

    static String findClasspath() {
        List<Path> dirs = new ArrayList<>();
        String configured = System.getProperty("kanuki.testkit.zookeeper.lib");
        if (configured != null && !configured.isBlank()) {
            dirs.add(Path.of(configured));
        }
        dirs.add(Path.of("/usr/share/java"));
        for (Path dir : dirs) {
            if (JARS.stream().allMatch(jar -> Files.isReadable(dir.resolve(jar)))) {
                List<String> paths = new ArrayList<>();
                JARS.forEach(jar -> paths.add(dir.resolve(jar).toString()));
                return String.join(java.io.File.pathSeparator, paths);
            }
        }
        throw new MissingServerException("ZooKeeper", "looked for " + String.join(", ", JARS)
                + " in -Dkanuki.testkit.zookeeper.lib and /usr/share/java", "zookeeper");
    }

    /** {@return {@code server.N=127.0.0.1:PEER:ELECTION}, this member's line in an ensemble's configuration} */
    String ensembleLine() {
        return "server." + myId + "=" + HOST + ":" + peerPort + ":" + electionPort;
    }

    void joinEnsemble(List<String> lines) {
        this.ensembleLines = List.copyOf(lines);
    }

    /** {@return {@code 127.0.0.1:PORT}, the client address} */
    public String connectString() {
        return HOST + ":" + port();
    }

    /** {@return {@code zookeeper://127.0.0.1:PORT}} */
    public String kanukiUri() {
        return "zookeeper://" + connectString();
    }

    /**
     * Asks the server with the four-letter command {@code srvr}.
     *
     * @return true when it serves clients (standalone, or in an ensemble with a quorum)
     */
    public boolean isServing() {
        return srvr().contains("Mode: ");
    }

    /** {@return the server's answer to {@code srvr}, or "" when it does not answer} */
    String srvr() {
        return fourLetterWord("srvr");
    }

    /**
     * Sends a four-letter command ({@code srvr}, {@code cons}, {@code mntr}...).
     *
     * @param command the command
     * @return the server's answer, or "" when it does not answer within a second
     */
    public String fourLetterWord(String command) {
        try (Socket socket = new Socket()) {
            socket.connect(new InetSocketAddress(HOST, port()), 1000);
            socket.setSoTimeout(1000);
            OutputStream out = socket.getOutputStream();
            out.write(command.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            InputStream in = socket.getInputStream();
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    @Override
    void initialize() throws IOException {
        Path data = subdirectory("data");
        if (myId > 0) {
            Files.writeString(data.resolve("myid"), Integer.toString(myId));
        }
    }

    @Override
    List<String> serverCommand(int port) {
        List<String> cfg = new ArrayList<>(List.of(
                "tickTime=200",
                "initLimit=50",
                "syncLimit=15",
                "minSessionTimeout=400",
                "maxSessionTimeout=60000",
                "dataDir=" + dataDirectory(),
                "clientPort=" + port,
                "clientPortAddress=" + HOST,
                "admin.enableServer=false",
                "4lw.commands.whitelist=*",
                "standaloneEnabled=true"));
        cfg.addAll(ensembleLines);
        Path file = directory.resolve("zoo.cfg");
        try {
            Files.write(file, cfg, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new java.io.UncheckedIOException("cannot write " + file, e);
        }
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return List.of(java, "-Xmx256m", "-XX:+UseSerialGC", "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-cp", classpath, "org.apache.zookeeper.server.quorum.QuorumPeerMain", file.toString());
    }

    @Override
    Path logFile() {
        return directory.resolve("zookeeper.out"); // SLF4J's simple logger writes to the captured stderr
    }

    @Override
    String readyMarker() {
        return "binding to port";
    }

    /** The log says when the port is bound, not when a quorum is there: ask the server. */
    @Override
    boolean isReady(String logSinceStart) {
        return logSinceStart.contains(readyMarker()) && isServing();
    }

    @Override
    void requestFastShutdown(Process process) throws IOException {
        signal(process, "TERM");
    }

    /** {@return {@code zookeeper}; the test servers run without authentication} */
    @Override
    public String user() {
        return "zookeeper";
    }

    @Override
    String productName() {
        return "ZooKeeper";
    }

    @Override
    String kanukiScheme() {
        return "zookeeper";
    }
}
