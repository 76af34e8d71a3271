package dev.kanuki.faults;

import dev.kanuki.FencedWriteRefusedException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.jdbc.JdbcFencedResource;
import dev.kanuki.spi.BackendProviders;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * A worker process of the fault suite. It says {@code ACQUIRING}, takes the lock, appends
 * {@code ENTER <nanos> <pid> <token>} to the shared referee log and says {@code HELD <token>}.
 * When its handle reports the lock lost it appends {@code EXIT ... lost} and says {@code LOST}: a
 * well-behaved holder stops its critical section there. Commands on standard input:
 * <ul>
 *   <li>{@code inc}: the fenced counter: reads the counter row, writes value + 1 with its token;
 *       says {@code INC <new value>} or {@code REFUSED};</li>
 *   <li>{@code channel PATH}: opens another channel to PATH and closes it, in this JVM (says
 *       {@code CHANNEL});</li>
 *   <li>{@code release}: appends {@code EXIT}, releases, says {@code RELEASED};</li>
 *   <li>{@code release-stay}: the same, but the provider stays open (its session or lease alive)
 *       until standard input ends: a release that was given up cannot be covered up by the
 *       provider's close.</li>
 * </ul>
 * Arguments: URI NAME FENCE_DB LOG. Times are {@link System#nanoTime()}: CLOCK_MONOTONIC on
 * Linux, the same clock in every process of the host.
 */
public final class FaultWorker {
    private static Path log;
    private static volatile boolean inside;

    private FaultWorker() {
    }

    /**
     * @param args URI, lock name, path of the fenced counter's SQLite database, referee log
     * @throws Exception on any failure (the exit code is then non-zero)
     */
    public static void main(String[] args) throws Exception {
        log = Path.of(args[3]);
        JdbcFencedResource counter = counter(Path.of(args[2]));
        LockHandle handle;
        LockProvider opened;
        try {
            opened = open(args[0]);
        } catch (RuntimeException e) {
            say("FAILED " + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' '));
            return;
        }
        try (LockProvider provider = opened) {
            say("ACQUIRING");
            try {
                handle = provider.lock(args[1]).acquire(Duration.ofSeconds(60));
            } catch (RuntimeException e) {
                say("FAILED " + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' '));
                return;
            }
            long token;
            try {
                token = handle.fencingToken(); // issued on demand on some backends: a lock lost by now is refused its token
            } catch (RuntimeException e) {
                say("FAILED " + e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' '));
                handle.close();
                return;
            }
            inside = true;
            record("ENTER", token, "");
            say("HELD " + token);
            handle.lost().thenRun(() -> {
                exit(token, "lost");
                say("LOST");
            });
            boolean stay = false;
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                if (line.equals("inc")) {
                    say(increment(counter, token));
                } else if (line.startsWith("channel ")) {
                    FileChannel.open(Path.of(line.substring(8)), StandardOpenOption.READ).close();
                    say("CHANNEL");
                } else if (line.equals("release") || line.equals("release-stay")) {
                    stay = line.equals("release-stay");
                    break;
                }
            }
            exit(token, "release");
            try {
                handle.close();
            } catch (RuntimeException e) {
                say("RELEASE-FAILED " + e);
            }
            while (stay && in.readLine() != null) {
                // keeps the provider open until the parent closes our stdin or kills us
            }
        }
        say("RELEASED");
    }

    /**
     * The provider: as an application opens it, or, when {@code KANUKI_FAULTS_PAUSE_AT} names a
     * {@link PausingBackend.Phase}, over a backend that pauses there once (until the file
     * {@code KANUKI_FAULTS_GO} exists).
     */
    private static LockProvider open(String uri) {
        String pauseAt = System.getenv("KANUKI_FAULTS_PAUSE_AT");
        if (pauseAt == null || pauseAt.isEmpty()) {
            return LockProvider.open(uri);
        }
        PausingBackend.Phase phase = PausingBackend.Phase.valueOf(pauseAt.toUpperCase(java.util.Locale.ROOT));
        return BackendProviders.open(uri, PausingBackend.wrap(uri, phase, Path.of(System.getenv("KANUKI_FAULTS_GO"))));
    }

    static JdbcFencedResource counter(Path db) {
        SQLiteConfig config = new SQLiteConfig();
        config.setBusyTimeout(20_000);
        SQLiteDataSource source = new SQLiteDataSource(config);
        source.setUrl("jdbc:sqlite:" + db);
        // Opening creates the table if missing; at load ~100 two workers starting at once saw
        // SQLITE_BUSY there despite the busy timeout (sqlite returns it without waiting in some
        // lock upgrades), and the worker died before it could wait for the lock. Try again.
        long giveUp = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try {
                return JdbcFencedResource.open(source, "counter");
            } catch (dev.kanuki.LockBackendException e) {
                if (System.nanoTime() > giveUp || !String.valueOf(e.getMessage()).contains("SQLITE_BUSY")) {
                    throw e;
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** @return the counter's value, 0 before the first write */
    static long value(JdbcFencedResource counter) {
        return counter.read().map(f -> Long.parseLong(new String(f.value(), StandardCharsets.UTF_8))).orElse(0L);
    }

    private static String increment(JdbcFencedResource counter, long token) {
        long next = value(counter) + 1;
        try {
            counter.write(token, Long.toString(next).getBytes(StandardCharsets.UTF_8));
            return "INC " + next;
        } catch (FencedWriteRefusedException e) {
            return "REFUSED";
        }
    }

    private static synchronized void exit(long token, String why) {
        if (inside) {
            inside = false;
            record("EXIT", token, why);
        }
    }

    static void record(String what, long token, String why) {
        String line = what + " " + System.nanoTime() + " " + ProcessHandle.current().pid() + " " + token + " " + why + "\n";
        try {
            Files.writeString(log, line, StandardOpenOption.CREATE, StandardOpenOption.APPEND); // one write(2), O_APPEND
        } catch (java.io.IOException e) {
            say("LOG-FAILED " + e);
        }
    }

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
