package dev.kanuki.testkit;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.GroupPrincipal;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipalLookupService;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A database server process the test kit started, with everything that is the same for every
 * kind of server: a private temporary directory, a free loopback port, the operating-system user
 * it runs as, waiting for it to be ready, killing it, and never leaving it behind.
 *
 * <p>Hazards handled here:
 * <ul>
 *   <li><b>root</b>: {@code initdb}, {@code postgres} and {@code mariadbd} refuse to run as root,
 *       and tests often run as root in containers and CI. Then the server runs as its service
 *       user ({@code postgres}, {@code mysql}) through {@code setpriv}, in a directory that user
 *       owns.</li>
 *   <li><b>leftover servers</b>: a JVM shutdown hook kills every server still running; and since
 *       a killed JVM runs no hooks, each server is also started with a parent-death signal
 *       ({@code setpriv --pdeathsig KILL}) from one long-lived launcher thread, so the kernel
 *       kills it when this JVM dies however it dies. Directories of dead test JVMs are removed on
 *       the next start.</li>
 *   <li><b>the system's own servers</b> on 5432/3306 are never touched: every server gets a free
 *       port on 127.0.0.1 and its own socket directory.</li>
 * </ul>
 */
public abstract class ServerProcess implements AutoCloseable {
    static final String HOST = "127.0.0.1";
    private static final String DIR_PREFIX = "kanuki-testkit-";
    private static final Duration READY_TIMEOUT = Duration.ofSeconds(60);
    private static final Set<ServerProcess> RUNNING = ConcurrentHashMap.newKeySet();
    /**
     * Starts every server process. It never ends before the JVM does, which matters: the kernel
     * sends the parent-death signal when the <em>thread</em> that started the child exits.
     */
    private static final ExecutorService LAUNCHER = new ThreadPoolExecutor(1, 1, 0, TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(), task -> {
                Thread t = new Thread(task, "kanuki-testkit-launcher");
                t.setDaemon(true);
                return t;
            });

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(ServerProcess::killAllAtExit, "kanuki-testkit-shutdown"));
        removeDirectoriesOfDeadRuns();
    }

    /** The private directory of this server (data, sockets, logs). */
    protected final Path directory;
    /** The service user the server runs as when this JVM is root, else {@code null}. */
    protected final String runAsUser;
    private final String kind;
    /**
     * Orders starts, stops and kills of this server. A lock, not the monitor: they wait for the
     * process, and a virtual thread waiting inside {@code synchronized} pins its carrier (JDK 21 to 23).
     */
    private final ReentrantLock lifecycle = new ReentrantLock();
    private int port;
    private volatile Process process;
    private volatile boolean deleted;

    /**
     * @param kind a short name for directories and messages, e.g. {@code postgres}
     * @param serviceUser the user to run as when this JVM runs as root
     */
    ServerProcess(String kind, String serviceUser) {
        this.kind = kind;
        this.runAsUser = isRoot() ? serviceUser : null;
        try {
            this.directory = Files.createTempDirectory(DIR_PREFIX + ProcessHandle.current().pid() + "-" + kind + "-");
            if (runAsUser != null) {
                giveTo(directory, runAsUser);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a directory for a test " + kind + " server", e);
        }
    }

    // ------------------------------------------------------------------ what each server says

    /** Creates the data directory (initdb, mariadb-install-db). Runs once, before the first start. */
    abstract void initialize() throws IOException, InterruptedException;

    /** {@return the command that runs the server in the foreground on {@code port}} */
    abstract List<String> serverCommand(int port);

    /** {@return the file the server writes its log to} */
    abstract Path logFile();

    /** {@return the log line that says the server accepts connections} */
    abstract String readyMarker();

    /**
     * Whether the server accepts connections. The default looks for {@link #readyMarker()} in
     * the log written since this start; a server that logs no such line asks its port instead.
     *
     * @param logSinceStart what the server logged since it was launched
     * @return true once the server is ready
     */
    boolean isReady(String logSinceStart) {
        return logSinceStart.contains(readyMarker());
    }

    /** Asks the server to shut down quickly (not waiting for clients to disconnect). */
    abstract void requestFastShutdown(Process process) throws IOException;

    // ------------------------------------------------------------------ life cycle

    /** Initializes the data directory and starts the server on a free port. */
    final void firstStart() {
        lifecycle.lock();
        try {
            try {
                initialize();
            } catch (IOException e) {
                deleteDirectory();
                throw new UncheckedIOException("initializing the test " + kind + " server in " + directory + " failed: "
                        + e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                deleteDirectory();
                throw new IllegalStateException("interrupted while initializing the test " + kind + " server", e);
            }
            IllegalStateException last = null;
            for (int attempt = 0; attempt < 3; attempt++) {
                port = freePort();
                try {
                    launch();
                    return;
                } catch (IllegalStateException e) {
                    last = e; // most likely the port was taken between choosing and binding it: choose again
                }
            }
            deleteDirectory();
            throw last;
        } finally {
            lifecycle.unlock();
        }
    }

    /** Starts the server again on the same port and data, after {@link #kill()} or {@link #stop()}. */
    public final void restart() {
        lifecycle.lock();
        try {
            if (isRunning()) {
                throw new IllegalStateException("the test " + kind + " server on port " + port + " is still running");
            }
            if (deleted) {
                throw new IllegalStateException("the test " + kind + " server was closed; start a new one");
            }
            launch();
        } finally {
            lifecycle.unlock();
        }
    }

    private void launch() {
        long logStart = sizeOf(logFile());
        List<String> command = asServiceUser(serverCommand(port), true);
        Process started;
        try {
            Future<Process> launched = LAUNCHER.submit(() -> {
                ProcessBuilder builder = new ProcessBuilder(command);
                builder.redirectErrorStream(true);
                builder.redirectOutput(ProcessBuilder.Redirect.appendTo(directory.resolve(kind + ".out").toFile()));
                return builder.start();
            });
            started = launched.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("cannot start " + String.join(" ", command) + ": " + e.getCause(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting the test " + kind + " server", e);
        }
        process = started;
        RUNNING.add(this);
        awaitReady(started, logStart);
    }

    private void awaitReady(Process started, long logStart) {
        long deadline = System.nanoTime() + READY_TIMEOUT.toNanos();
        while (System.nanoTime() < deadline) {
            if (isReady(logSince(logStart))) {
                return;
            }
            if (!started.isAlive()) {
                RUNNING.remove(this);
                throw new IllegalStateException("the test " + kind + " server exited with code " + started.exitValue()
                        + " before it was ready on port " + port + "; its log says:\n" + tail(logSince(logStart))
                        + tail(readQuietly(directory.resolve(kind + ".out"))));
            }
            sleep(10);
        }
        killTree(started);
        RUNNING.remove(this);
        throw new IllegalStateException("the test " + kind + " server was not ready within " + READY_TIMEOUT.toSeconds()
                + "s; its log says:\n" + tail(logSince(logStart)));
    }

    /** {@return true while the server process runs} */
    public final boolean isRunning() {
        Process p = process;
        return p != null && p.isAlive();
    }

    /**
     * Kills the server and all its processes with SIGKILL, as a crash would: no checkpoint, no
     * goodbye to clients. {@link #restart()} then runs crash recovery.
     */
    public final void kill() {
        lifecycle.lock();
        try {
            Process p = process;
            if (p != null) {
                killTree(p);
                RUNNING.remove(this);
            }
        } finally {
            lifecycle.unlock();
        }
    }

    /** Shuts the server down quickly (clients are disconnected), waiting at most 30 s. */
    public final void stop() {
        lifecycle.lock();
        try {
            Process p = process;
            if (p == null || !p.isAlive()) {
                RUNNING.remove(this);
                return;
            }
            List<ProcessHandle> tree = treeOf(p);
            try {
                requestFastShutdown(p);
                if (!p.waitFor(30, TimeUnit.SECONDS)) {
                    killTree(p);
                }
            } catch (IOException e) {
                killTree(p);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                killTree(p);
            }
            awaitExit(tree);
            RUNNING.remove(this);
        } finally {
            lifecycle.unlock();
        }
    }

    /** Stops the server and removes its directory. Idempotent. */
    @Override
    public void close() {
        lifecycle.lock();
        try {
            kill();
            deleteDirectory();
        } finally {
            lifecycle.unlock();
        }
    }

    /** {@return the loopback address the server listens on: {@code 127.0.0.1}} */
    public final String host() {
        return HOST;
    }

    /** {@return the server's TCP port on 127.0.0.1} */
    public final int port() {
        return port;
    }

    /** {@return the server's private directory (data, socket, logs)} */
    public final Path directory() {
        return directory;
    }

    /** {@return the process id of the server (the postmaster for PostgreSQL), or -1 when stopped} */
    public final long pid() {
        Process p = process;
        return p != null && p.isAlive() ? p.pid() : -1;
    }

    /** {@return the server's data directory: {@code data} under {@link #directory()}} */
    public final Path dataDirectory() {
        return directory.resolve("data");
    }

    /** {@return the database user tests connect as} */
    public abstract String user();

    /** {@return the JDBC URL scheme after {@code jdbc:}, e.g. {@code postgresql}} */
    abstract String jdbcScheme();

    /** {@return the kanuki backend URI scheme, e.g. {@code postgresql}} */
    abstract String kanukiScheme();

    /**
     * Builds the JDBC URL of a database on this server.
     *
     * @param database a database name
     * @return a JDBC URL for it, e.g. {@code jdbc:postgresql://127.0.0.1:54321/locks?user=kanuki}
     */
    public final String jdbcUrl(String database) {
        return "jdbc:" + jdbcScheme() + "://" + HOST + ":" + port() + "/" + database + "?user=" + user();
    }

    /**
     * Builds the kanuki backend URI of a database on this server.
     *
     * @param database a database name
     * @return the kanuki backend URI for it, e.g. {@code mysql://127.0.0.1:43306/locks?user=root}
     */
    public final String kanukiUri(String database) {
        return kanukiScheme() + "://" + HOST + ":" + port() + "/" + database + "?user=" + user();
    }

    /**
     * Creates a database unless it exists.
     *
     * @param name lower-case letters, digits and underscores
     * @return the name
     */
    public abstract String createDatabase(String name);

    /**
     * Opens a JDBC connection to a database on this server.
     *
     * @param database a database name
     * @return a new connection to it, for tests that check the server's side directly
     * @throws java.sql.SQLException when the server refuses
     */
    public abstract java.sql.Connection connect(String database) throws java.sql.SQLException;

    // ------------------------------------------------------------------ helpers for subclasses

    /**
     * Runs a preparation command (initdb, install-db) as the service user, and fails with its
     * output when it does not succeed.
     */
    final void runToCompletion(List<String> command, Duration timeout) throws IOException, InterruptedException {
        List<String> full = asServiceUser(command, false);
        Path output = directory.resolve(Path.of(command.get(0)).getFileName() + ".log");
        ProcessBuilder builder = new ProcessBuilder(full);
        builder.redirectErrorStream(true);
        builder.redirectOutput(output.toFile());
        Process p = builder.start();
        if (!p.waitFor(timeout.toSeconds(), TimeUnit.SECONDS)) {
            killTree(p);
            throw new IOException(String.join(" ", full) + " did not finish within " + timeout.toSeconds() + "s");
        }
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", full) + " failed with exit code " + p.exitValue() + ":\n"
                    + tail(readQuietly(output)));
        }
    }

    /** Makes a directory inside {@link #directory} that the service user owns. */
    final Path subdirectory(String name) throws IOException {
        Path dir = Files.createDirectories(directory.resolve(name));
        if (runAsUser != null) {
            giveTo(dir, runAsUser);
        }
        return dir;
    }

    /** Sends a signal by name ({@code INT}, {@code TERM}) to a process. */
    static void signal(Process p, String signal) throws IOException {
        try {
            Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(p.pid())).start();
            kill.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while signalling " + p.pid(), e);
        }
    }

    /**
     * Sends a signal by name ({@code STOP}, {@code CONT}) to the running server process.
     *
     * @throws IllegalStateException when the server is not running
     */
    final void signalServer(String signal) {
        Process p = process;
        if (p == null || !p.isAlive()) {
            throw new IllegalStateException("the test " + kind + " server on port " + port + " is not running");
        }
        try {
            signal(p, signal);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot send SIG" + signal + " to the test " + kind + " server", e);
        }
        if (signal.equals("STOP")) {
            awaitStopped(p.pid());
        }
    }

    /**
     * Waits (at most 10 s) until every thread of {@code pid} is stopped: kill(1) returns once the
     * signal is sent, and on a loaded machine a thread of the server may still answer a request
     * that arrives right after it.
     */
    static void awaitStopped(long pid) {
        Path tasks = Path.of("/proc", Long.toString(pid), "task");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadline) {
            try (java.util.stream.Stream<Path> threads = Files.list(tasks)) {
                if (threads.allMatch(ServerProcess::isStopped)) {
                    return;
                }
            } catch (IOException | UncheckedIOException e) {
                return; // no /proc (not Linux) or the process is gone: nothing to wait for
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static boolean isStopped(Path task) {
        try {
            String stat = Files.readString(task.resolve("stat"));
            char state = stat.charAt(stat.lastIndexOf(')') + 2); // the field after the command's name
            return state == 'T' || state == 't';
        } catch (IOException | RuntimeException e) {
            return true; // the thread ended
        }
    }

    static Path findExecutable(List<Path> candidates) {
        for (Path candidate : candidates) {
            if (Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    static Path onPath(String name) {
        String path = System.getenv("PATH");
        if (path == null) {
            return null;
        }
        for (String dir : path.split(java.io.File.pathSeparator)) {
            if (!dir.isEmpty() && Files.isExecutable(Path.of(dir, name))) {
                return Path.of(dir, name);
            }
        }
        return null;
    }

    // ------------------------------------------------------------------ internals

    private List<String> asServiceUser(List<String> command, boolean dieWithThisJvm) {
        Path setpriv = findExecutable(List.of(Path.of("/usr/bin/setpriv"), Path.of("/bin/setpriv")));
        if (setpriv == null) {
            if (runAsUser != null) {
                throw new MissingServerException("setpriv (to run the " + kind + " server as user " + runAsUser
                        + " because this JVM runs as root)", "/usr/bin/setpriv", "util-linux");
            }
            return command;
        }
        List<String> full = new ArrayList<>();
        full.add(setpriv.toString());
        if (runAsUser != null) {
            full.addAll(List.of("--reuid=" + runAsUser, "--regid=" + runAsUser, "--init-groups"));
        }
        if (dieWithThisJvm) {
            full.addAll(List.of("--pdeathsig", "KILL"));
        }
        full.add("--");
        full.addAll(command);
        return full;
    }

    private static boolean isRoot() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) {
                    return line.split("\\s+")[1].equals("0");
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: fall back to the name
        }
        return "root".equals(System.getProperty("user.name"));
    }

    private static void giveTo(Path path, String user) throws IOException {
        UserPrincipalLookupService lookup = path.getFileSystem().getUserPrincipalLookupService();
        try {
            Files.setOwner(path, lookup.lookupPrincipalByName(user));
        } catch (java.nio.file.attribute.UserPrincipalNotFoundException e) {
            throw new IllegalStateException("this JVM runs as root, so the test server must run as user '" + user
                    + "', which does not exist; install the server package (it creates the user) or run the tests"
                    + " as an ordinary user", e);
        }
        try {
            GroupPrincipal group = lookup.lookupPrincipalByGroupName(user);
            Files.getFileAttributeView(path, PosixFileAttributeView.class).setGroup(group);
        } catch (java.nio.file.attribute.UserPrincipalNotFoundException e) {
            // no group of that name: the user's ownership is enough
        }
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rwx------"));
    }

    static int freePort() {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(HOST))) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find a free port on " + HOST, e);
        }
    }

    private String logSince(long offset) {
        Path log = logFile();
        try {
            if (!Files.exists(log)) {
                return "";
            }
            byte[] bytes = Files.readAllBytes(log);
            int from = (int) Math.min(offset, bytes.length);
            return new String(bytes, from, bytes.length - from, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "";
        }
    }

    private static long sizeOf(Path file) {
        try {
            return Files.exists(file) ? Files.size(file) : 0;
        } catch (IOException e) {
            return 0;
        }
    }

    private static String readQuietly(Path file) {
        try {
            return Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "";
        }
    }

    private static String tail(String text) {
        String[] lines = text.split("\n");
        StringBuilder out = new StringBuilder();
        for (int i = Math.max(0, lines.length - 15); i < lines.length; i++) {
            if (!lines[i].isBlank()) {
                out.append("  ").append(lines[i]).append('\n');
            }
        }
        return out.toString();
    }

    private static List<ProcessHandle> treeOf(Process p) {
        List<ProcessHandle> tree = new ArrayList<>();
        tree.add(p.toHandle());
        p.toHandle().descendants().forEach(tree::add);
        return tree;
    }

    private static void killTree(Process p) {
        List<ProcessHandle> tree = treeOf(p);
        tree.forEach(ProcessHandle::destroyForcibly);
        awaitExit(tree);
        try {
            p.waitFor(10, TimeUnit.SECONDS); // our own child: wait until the JVM has reaped it
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Waits until every process of the tree is gone. Polls: {@code onExit()} of a process that is
     * not this JVM's child backs off to one-second sleeps, which would make every kill slow.
     */
    private static void awaitExit(List<ProcessHandle> tree) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        for (ProcessHandle h : tree) {
            while (!isGone(h) && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    /** A killed process whose parent died too stays a zombie until init reaps it: that is gone. */
    private static boolean isGone(ProcessHandle h) {
        if (!h.isAlive()) {
            return true;
        }
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(h.pid()), "stat"));
            int close = stat.lastIndexOf(')');
            return close > 0 && close + 2 < stat.length() && stat.charAt(close + 2) == 'Z';
        } catch (IOException | RuntimeException e) {
            return !h.isAlive();
        }
    }

    private void deleteDirectory() {
        deleted = true;
        deleteRecursively(directory);
    }

    private static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try {
            Files.walkFileTree(dir, new SimpleFileVisitor<>() {
                @Override
                public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
                    Files.deleteIfExists(file);
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult visitFileFailed(Path file, IOException exc) {
                    return FileVisitResult.CONTINUE;
                }

                @Override
                public FileVisitResult postVisitDirectory(Path d, IOException exc) throws IOException {
                    Files.deleteIfExists(d);
                    return FileVisitResult.CONTINUE;
                }
            });
        } catch (IOException e) {
            // a leftover temporary directory is removed by the next run
        }
    }

    private static void killAllAtExit() {
        for (ServerProcess server : new ArrayList<>(RUNNING)) {
            Process p = server.process;
            if (p != null) {
                treeOf(p).forEach(ProcessHandle::destroyForcibly);
            }
        }
        for (ServerProcess server : new ArrayList<>(RUNNING)) {
            Process p = server.process;
            if (p != null) {
                awaitExit(treeOf(p));
            }
            server.deleteDirectory();
        }
    }

    /** Removes directories left by test JVMs that were killed (their servers died with them). */
    private static void removeDirectoriesOfDeadRuns() {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(tmp, DIR_PREFIX + "*")) {
            for (Path entry : entries) {
                String rest = entry.getFileName().toString().substring(DIR_PREFIX.length());
                int dash = rest.indexOf('-');
                if (dash <= 0) {
                    continue;
                }
                try {
                    long pid = Long.parseLong(rest.substring(0, dash));
                    if (pid != ProcessHandle.current().pid() && ProcessHandle.of(pid).map(h -> !h.isAlive()).orElse(true)) {
                        deleteRecursively(entry);
                    }
                } catch (NumberFormatException e) {
                    // not ours
                }
            }
        } catch (IOException | RuntimeException e) {
            // best effort
        }
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for a test server", e);
        }
    }

    @Override
    public String toString() {
        return "test " + kind + " server on " + HOST + ":" + port + " (" + directory + ")";
    }
}
