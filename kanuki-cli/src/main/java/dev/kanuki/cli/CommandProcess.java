package dev.kanuki.cli;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The command {@code kanuki run} runs, started so that it cannot outlive kanuki unnoticed and
 * so that each signal reaches it once.
 *
 * <p>On Linux, with util-linux's {@code setpriv} (2.33 or later) and {@code setsid} on the
 * {@code PATH} or in {@code /usr/bin} or {@code /bin}, the command is started as
 * {@code setsid setpriv --pdeathsig KILL -- sh -c CHECK sh JVMPID CMD...}:
 * <ul>
 *   <li>{@code --pdeathsig KILL}: the kernel SIGKILLs the command when the thread that started
 *       it ends, so it is started from a thread that waits for it (the parent-death signal is
 *       tied to that thread, not to the JVM). The shell then checks that its parent is still
 *       this JVM: had the JVM died before the signal was armed, the command does not start.</li>
 *   <li>{@code setsid}: the command runs in its own session and process group, so a signal sent
 *       to kanuki's process group (Ctrl-C, {@code kill -INT -PGID}) reaches kanuki alone, which
 *       passes it on to the command's group exactly once.</li>
 *   <li>A watcher ({@code setsid sh -c 'read; kill -KILL -- -PGID'}, its standard input a pipe
 *       only this JVM holds) SIGKILLs the command's whole process group when the JVM dies, so
 *       the processes the command started go too. It is started before the command, told the
 *       group once the command has started, and told "done" when the command has exited.</li>
 * </ul>
 *
 * <p>When kanuki is the foreground job of a terminal, the command stays in kanuki's process
 * group instead (terminal reads, {@code /dev/tty} prompts, Ctrl-Z work as without kanuki): the
 * terminal sends SIGINT and SIGHUP to the whole job, so kanuki does not pass those on. The
 * parent-death signal still applies; the command's own children are not watched.
 *
 * <p>Without {@code setpriv} (or not on Linux) the command is started directly, as
 * {@code flock(1)} would, and kanuki warns that it keeps running if kanuki is killed.
 */
final class CommandProcess {
    /** Checks, after the parent-death signal is armed, that the JVM that started us still lives. */
    private static final String PARENT_CHECK = "[ \"$PPID\" = \"$1\" ] || exit 125; shift; exec \"$@\"";
    /** Reads the group to watch, then waits: end of input without "done" means the JVM died. */
    private static final String WATCHER =
            "read -r group || exit 0; read -r _ || kill -s KILL -- \"-$group\" 2>/dev/null";

    /** Where a command's signals go. */
    enum Isolation {
        /** Own session and process group, watched; kanuki forwards INT, TERM and HUP to the group. */
        OWN_GROUP,
        /** kanuki's process group (kanuki is a terminal's foreground job); kanuki forwards TERM. */
        TERMINAL_JOB,
        /** Started directly: no parent-death signal; kanuki forwards INT, TERM and HUP. */
        UNPROTECTED
    }

    private final Process process;
    private final Isolation isolation;
    private final Process watcher;

    private CommandProcess(Process process, Isolation isolation, Process watcher) {
        this.process = process;
        this.isolation = isolation;
        this.watcher = watcher;
    }

    /** A launcher made at the JVM's start by {@link #prestart()}, until a command takes it. */
    private static Launcher prestarted; // guarded by CommandProcess.class

    /**
     * Makes the launcher that the next {@link #launcher()} returns, at once: called at the start
     * of {@code kanuki run}, so that the watcher's start overlaps with reading the command line,
     * opening the backend and taking the lock. A launcher no command takes stops its watcher
     * when the JVM exits (the watcher reads the end of its input).
     */
    static synchronized void prestart() {
        // Not an AtomicReference: its class set-up (a VarHandle) costs the main thread milliseconds here.
        if (prestarted == null) {
            prestarted = new Launcher();
        }
    }

    /**
     * Prepares to start a command: on a background thread, decides its isolation and, when its
     * process group is to be watched, starts the watcher, so that the watcher's start (a process
     * launch, the JVM's first one being the slowest) overlaps with taking the lock. Close it when
     * done: a watcher that was never used is stopped.
     *
     * @return a launcher for one command: the one {@link #prestart()} made, else a new one
     */
    static Launcher launcher() {
        Launcher early;
        synchronized (CommandProcess.class) {
            early = prestarted;
            prestarted = null;
        }
        return early != null ? early : new Launcher();
    }

    /** Starts one command, with its watcher started early; see {@link #launcher()}. */
    static final class Launcher implements AutoCloseable {
        // Plain fields under a lock rather than futures: CompletableFuture's class set-up costs the
        // start-up milliseconds on the main thread (its VarHandles). ReentrantLock is loaded by the
        // JVM's own start; not this object's monitor, so that a virtual thread waiting in
        // awaitPrepared does not pin its carrier (JDK 21 to 23).
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition preparedChanged = lock.newCondition();
        private Isolation isolation;
        private Process watcher;
        private boolean prepared;
        private boolean used;
        private boolean closed;

        private Launcher() {
            // A Thread subclass, not a lambda: at start-up a lambda would make the calling thread
            // set up the invokedynamic machinery (milliseconds), which StartupWarmup does elsewhere.
            Thread starter = new Thread("kanuki-watcher-start") {
                @Override
                public void run() {
                    prepare();
                }
            };
            starter.setDaemon(true);
            starter.start();
        }

        private void prepare() {
            Isolation decided = Isolation.UNPROTECTED;
            Process started = null;
            try {
                decided = CommandProcess.isolation();
                if (decided == Isolation.OWN_GROUP) {
                    started = startWatcher(Tools.SETSID.get());
                }
            } finally {
                boolean unwanted;
                lock.lock();
                try {
                    isolation = decided;
                    watcher = started;
                    prepared = true;
                    unwanted = closed && !used;
                    preparedChanged.signalAll();
                } finally {
                    lock.unlock();
                }
                if (unwanted && started != null) {
                    started.destroy();
                }
            }
        }

        private void awaitPrepared() {
            boolean interrupted = false;
            lock.lock();
            try {
                while (!prepared) {
                    try {
                        preparedChanged.await();
                    } catch (InterruptedException e) {
                        interrupted = true;
                    }
                }
            } finally {
                lock.unlock();
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }

        /** @return how the command will be isolated */
        Isolation isolation() {
            awaitPrepared();
            return isolation;
        }

        /**
         * Starts the command. Call it from a thread that lives until the command has exited.
         *
         * @param command the command and its arguments
         * @param environment variables to add to the command's environment
         * @return the started command
         * @throws IOException when it cannot be started
         */
        CommandProcess start(List<String> command, Map<String, String> environment) throws IOException {
            awaitPrepared();
            lock.lock();
            try {
                used = true;
            } finally {
                lock.unlock();
            }
            return CommandProcess.start(command, environment, isolation, watcher);
        }

        /** Stops the watcher when no command was started with it (once it has started, if it is still starting). */
        @Override
        public void close() {
            Process unused;
            lock.lock();
            try {
                closed = true;
                unused = prepared && !used ? watcher : null;
            } finally {
                lock.unlock();
            }
            if (unused != null) {
                unused.destroy();
            }
        }
    }

    private static CommandProcess start(List<String> command, Map<String, String> environment, Isolation isolation,
            Process watcher) throws IOException {
        Optional<Path> setpriv = Tools.SETPRIV;
        Optional<Path> setsid = Tools.SETSID;
        List<String> argv = new ArrayList<>();
        if (isolation == Isolation.OWN_GROUP) {
            argv.add(setsid.get().toString());
        }
        if (isolation != Isolation.UNPROTECTED) {
            argv.addAll(List.of(setpriv.get().toString(), "--pdeathsig", "KILL", "--", "/bin/sh", "-c", PARENT_CHECK,
                    "sh", Long.toString(ProcessHandle.current().pid())));
        }
        argv.addAll(command);
        ProcessBuilder builder = new ProcessBuilder(argv).inheritIO();
        LauncherEnvironment.restore(builder.environment());
        builder.environment().putAll(environment);
        // The watcher was started first, so that it is ready before the command can start others.
        Process process;
        try {
            process = builder.start();
        } catch (IOException | RuntimeException e) {
            if (watcher != null) {
                watcher.destroy();
            }
            throw e;
        }
        if (watcher != null) {
            tell(watcher, process.pid() + "\n", false);
        }
        return new CommandProcess(process, isolation, watcher);
    }

    private static Process startWatcher(Path setsid) {
        try {
            return new ProcessBuilder(setsid.toString(), "/bin/sh", "-c", WATCHER)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
        } catch (IOException e) {
            return null; // the parent-death signal still protects the command itself
        }
    }

    /** Writes a line to the watcher; a watcher that is gone can do no harm. */
    private static void tell(Process watcher, String line, boolean last) {
        try {
            OutputStream in = watcher.getOutputStream();
            in.write(line.getBytes(StandardCharsets.US_ASCII));
            in.flush();
            if (last) {
                in.close();
            }
        } catch (IOException e) {
            watcher.destroy();
        }
    }

    /** @return how a command started now would be isolated, from the tools found and kanuki's terminal */
    static Isolation isolation() {
        if (Tools.SETPRIV.isEmpty()) {
            return Isolation.UNPROTECTED;
        }
        return Terminal.isForegroundJob() || Tools.SETSID.isEmpty() ? Isolation.TERMINAL_JOB : Isolation.OWN_GROUP;
    }

    /**
     * @param isolation how the command runs
     * @return the signals kanuki passes on to the command (the others reach it, or kanuki, directly)
     */
    static List<String> forwardedSignals(Isolation isolation) {
        return isolation == Isolation.TERMINAL_JOB ? List.of("TERM") : List.of("INT", "TERM", "HUP");
    }

    /** @return a warning for standard error when the command is not protected, else empty */
    Optional<String> warning() {
        return isolation == Isolation.UNPROTECTED
                ? Optional.of("warning: setpriv (util-linux 2.33 or later) not found; "
                        + "the command keeps running if kanuki is killed")
                : Optional.empty();
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /**
     * @param limit how long to wait at most
     * @return true when the command has exited
     */
    boolean awaitExit(Duration limit) {
        try {
            return process.waitFor(limit.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return !process.isAlive();
        }
    }

    /**
     * Waits for the command, ignoring interrupts: the lock is held until it is done.
     *
     * @return its exit code, 128+N when it died of signal N
     */
    int waitUninterruptibly() {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return process.waitFor();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Sends a signal to the command: to its process group when it has its own, else to it alone.
     *
     * @param signal a name such as {@code TERM}
     */
    void signal(String signal) {
        if (!process.isAlive() && isolation != Isolation.OWN_GROUP) {
            return;
        }
        String target = isolation == Isolation.OWN_GROUP ? "-" + process.pid() : Long.toString(process.pid());
        // ProcessHandle can only send TERM and KILL, so use kill(1) for the exact signal.
        try {
            Process kill = new ProcessBuilder("kill", "-s", signal, "--", target)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
            if (kill.waitFor(5, TimeUnit.SECONDS) && kill.exitValue() == 0) {
                return;
            }
        } catch (IOException e) {
            // fall back below
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (signal.equals("TERM")) {
            process.destroy();
        } else if (signal.equals("KILL")) {
            process.destroyForcibly();
        }
    }

    /** Stops watching the command's process group; call it once the command has exited. */
    void stopWatching() {
        if (watcher != null) {
            tell(watcher, "done\n", true);
        }
    }

    /** The launch tools, looked up once. */
    private static final class Tools {
        static final Optional<Path> SETPRIV = find("setpriv").filter(Tools::knowsPdeathsig);
        static final Optional<Path> SETSID = find("setsid");

        /**
         * util-linux added {@code --pdeathsig} in 2.33 (2018); an older setpriv, or busybox's,
         * would refuse the option and run nothing. Looking for the option's name in the program
         * costs far less than running it.
         */
        private static boolean knowsPdeathsig(Path setpriv) {
            try {
                if (Files.size(setpriv) > 16 << 20) {
                    return false;
                }
                byte[] program = Files.readAllBytes(setpriv);
                byte[] option = "pdeathsig".getBytes(StandardCharsets.US_ASCII);
                outer:
                for (int i = 0; i + option.length <= program.length; i++) {
                    for (int j = 0; j < option.length; j++) {
                        if (program[i + j] != option[j]) {
                            continue outer;
                        }
                    }
                    return true;
                }
                return false;
            } catch (IOException e) {
                return false;
            }
        }

        private static Optional<Path> find(String name) {
            if (!System.getProperty("os.name", "").equals("Linux")) {
                return Optional.empty();
            }
            List<String> dirs = new ArrayList<>();
            String path = System.getenv("PATH");
            if (path != null) {
                dirs.addAll(List.of(path.split(":")));
            }
            dirs.addAll(List.of("/usr/bin", "/bin"));
            for (String dir : dirs) {
                if (dir.isEmpty()) {
                    continue;
                }
                Path candidate = Path.of(dir, name);
                if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                    return Optional.of(candidate);
                }
            }
            return Optional.empty();
        }
    }

    /** What {@code /proc/self/stat} says about kanuki's terminal. */
    static final class Terminal {
        private Terminal() {
        }

        /** @return true when kanuki's process group is the foreground group of its controlling terminal */
        static boolean isForegroundJob() {
            try {
                String stat = Files.readString(Path.of("/proc/self/stat"), StandardCharsets.US_ASCII);
                // pid (comm) state ppid pgrp session tty_nr tpgid ...; comm may hold spaces and ')'.
                String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split(" ");
                long pgrp = Long.parseLong(f[2]);
                long ttyNr = Long.parseLong(f[4]);
                long tpgid = Long.parseLong(f[5]);
                return ttyNr != 0 && tpgid == pgrp;
            } catch (IOException | RuntimeException e) {
                return false;
            }
        }
    }
}
