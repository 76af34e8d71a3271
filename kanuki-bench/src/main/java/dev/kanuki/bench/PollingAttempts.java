package dev.kanuki.bench;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * How many attempts per second a JVM waiting on a ttl strategy of {@code file:} makes, measured
 * from outside: this JVM holds lock {@code probe}; a {@link PollingWaiter} JVM, run under
 * {@code strace -f}, waits for it for {@code kanuki.bench.holdSeconds} (default 3) seconds; then
 * this JVM releases. The waiter's entry-creation syscalls on the lock's entry are counted from
 * the trace (mkdir of {@code *.lockdir}, symlink to {@code *.lnk}, rename of {@code *.free},
 * {@code O_EXCL} open of {@code *.lck}, read-only open of {@code *.queue}): one per attempt. Also
 * prints the one handoff's latency (release here to acquire there, wall clock, after the waiter
 * warmed up its acquire path; under strace, so a little slower than {@link PollingHandoffBench}'s). Target: at most 200 attempts per second.
 *
 * <p>Needs {@code strace} (Debian: {@code apt-get install strace}) and ptrace permission.
 * <pre>
 * java -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.PollingAttempts [STRATEGY…]
 * java -Dkanuki.bench.poll=20ms -cp kanuki-bench/target/benchmarks.jar dev.kanuki.bench.PollingAttempts mkdir
 * </pre>
 */
public final class PollingAttempts {
    private PollingAttempts() {
    }

    static long epochMicros(Instant t) {
        return TimeUnit.SECONDS.toMicros(t.getEpochSecond()) + t.getNano() / 1000;
    }

    /** One measurement. */
    record Result(String strategy, long attempts, long waitedMicros, long handoffMicros) {
        double perSecond() {
            return attempts * 1e6 / waitedMicros;
        }
    }

    public static void main(String[] args) throws Exception {
        List<String> strategies = args.length > 0 ? List.of(args) : List.of(TtlByHand.STRATEGIES);
        long holdMillis = Duration.ofSeconds(Long.getLong("kanuki.bench.holdSeconds", 3)).toMillis();
        String poll = System.getProperty("kanuki.bench.poll");
        List<Result> results = new ArrayList<>();
        for (String strategy : strategies) {
            results.add(measure(strategy, holdMillis, poll));
        }
        System.out.println();
        System.out.println("a JVM waiting on a held lock (target: at most 200 attempts/s; handoff under strace):");
        for (Result r : results) {
            System.out.printf(Locale.ROOT, "  %-8s %5d attempts in %.2f s = %.0f attempts/s; handoff %.2f ms%n",
                    r.strategy(), r.attempts(), r.waitedMicros() / 1e6, r.perSecond(), r.handoffMicros() / 1000.0);
        }
    }

    static Result measure(String strategy, long holdMillis, String poll) throws Exception {
        Path dir = BenchFiles.newTempDir("kanuki-attempts-" + strategy);
        Path trace = Files.createTempFile("kanuki-attempts-" + strategy, ".strace");
        String uri = HandoffParty.fileTtlUri(dir, strategy) + (poll == null ? "" : "&poll=" + poll);
        try (LockProvider provider = LockProvider.open(uri)) {
            LockHandle held = provider.lock(PollingWaiter.NAME).acquire(Duration.ofSeconds(5));
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            // --seccomp-bpf: only the traced calls stop the waiter; without it every futex and
            // clock call of every JVM thread would, and the waiter would try less often than untraced.
            ProcessBuilder builder = new ProcessBuilder("strace", "-f", "--seccomp-bpf", "-qq", "-o", trace.toString(),
                    "-e", "trace=mkdir,mkdirat,symlink,symlinkat,rename,renameat,renameat2,open,openat",
                    java, "-cp", System.getProperty("java.class.path"), PollingWaiter.class.getName(), uri);
            builder.redirectError(ProcessBuilder.Redirect.INHERIT);
            Process waiter = builder.start();
            try (BufferedReader out = new BufferedReader(new InputStreamReader(waiter.getInputStream(), StandardCharsets.UTF_8))) {
                String line = out.readLine();
                if (!"WAITING".equals(line)) {
                    throw new IllegalStateException("the waiter said " + line + "; its stderr is above");
                }
                Thread.sleep(holdMillis);
                long released = epochMicros(Instant.now());
                held.close();
                line = out.readLine();
                if (line == null || !line.startsWith("ACQUIRED ")) {
                    throw new IllegalStateException("the waiter said " + line + "; its stderr is above");
                }
                String[] f = line.split(" ");
                long acquiredAt = Long.parseLong(f[1]);
                long waited = Long.parseLong(f[2]);
                if (!waiter.waitFor(30, TimeUnit.SECONDS)) {
                    waiter.destroyForcibly();
                }
                long attempts;
                try (var lines = Files.lines(trace)) {
                    // only lock "probe"'s entry: the waiter's warm-up lock has another name
                    attempts = lines.filter(l -> l.contains("/" + PollingWaiter.NAME + "."))
                            .filter(attempt(strategy)).count();
                }
                return new Result(strategy, attempts, waited, acquiredAt - released);
            } finally {
                if (waiter.isAlive()) {
                    waiter.destroyForcibly();
                }
            }
        } finally {
            Files.deleteIfExists(trace);
            BenchFiles.deleteQuietly(dir);
        }
    }

    /** Which traced syscall is one attempt of a strategy (on lock {@code probe}'s entry). */
    static Predicate<String> attempt(String strategy) {
        return switch (strategy) {
            case "mkdir" -> l -> l.contains("mkdir") && l.contains(".lockdir\"");
            case "symlink" -> l -> l.contains("symlink") && l.contains(".lnk\"");
            case "rename" -> l -> l.contains("rename") && l.contains(".free\"") && l.contains(".held\"")
                    && l.indexOf(".free\"") < l.indexOf(".held\"");
            case "create" -> l -> l.contains("open") && l.contains(".lck\"") && l.contains("O_EXCL");
            case "queue" -> l -> l.contains("open") && l.contains(".queue\"") && l.contains("O_RDONLY");
            default -> throw new IllegalArgumentException("unknown strategy " + strategy);
        };
    }
}
