package dev.kanuki.faults;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;
import java.util.zip.CRC32C;

/**
 * The faults of a lock directory (the file strategies, and SQLite's database file): another
 * channel closed in the holder's JVM, damaged and planted artefacts, permissions, a full disk,
 * clock steps, and hostile names (that one on every backend).
 */
final class FileFaults {
    private static final byte[] PRECIOUS = "precious: must never be written through a planted link\n".getBytes(StandardCharsets.UTF_8);

    private FileFaults() {
    }

    // ------------------------------------------------------------------ with worker processes

    /**
     * The holder's JVM opens another channel to each of its lock's files and closes it (other
     * code of the same process touching the lock file), while another process waits.
     */
    static Outcome secondChannel(Trial t) throws Exception {
        Worker holder = t.holder(t.uri());
        Worker waiter = t.waiters(1, t.uri()).get(0);
        long at = t.mark(FaultSuiteTest.CHANNEL);
        List<Path> files = regularFiles(t.dir().resolve("locks"));
        for (Path f : files) {
            holder.channel(f, Trial.ANSWER);
        }
        if (Trial.until(Target.LEASE.plusSeconds(2), waiter::holds)) {
            long ms = (t.enteredAt(waiter.token()) - at) / 1_000_000;
            String w = waiter.inc(Trial.ANSWER);
            String h = holder.inc(Trial.ANSWER);
            return t.judge(FaultSuiteTest.CHANNEL, ms, "the waiter took the lock " + ms + " ms after " + files.size()
                    + " channel(s) closed, holder told: " + holder.lost() + ", waiter " + w + ", old holder " + h);
        }
        String h = holder.inc(Trial.ANSWER);
        holder.release(Trial.ANSWER);
        Trial.until(t.target().recoveryBound(), waiter::holds);
        waiter.inc(Trial.ANSWER);
        return t.judge(FaultSuiteTest.CHANNEL, -1, "the lock stayed with its holder after " + files.size()
                + " other channel(s) to " + names(files) + " were opened and closed (its write: " + h + ")");
    }

    /**
     * A clock step of the waiter, faked: the holder's record gets a lease end a minute in the
     * past, the same as the waiter's clock jumping forward by a minute plus the lease left.
     */
    static Outcome clockStep(Trial t) throws Exception {
        Worker holder = t.holder(t.uri());
        Worker waiter = t.waiters(1, t.uri()).get(0);
        long at = t.mark(FaultSuiteTest.CLOCK);
        int rewritten;
        try {
            rewritten = backdateRecords(t.dir().resolve("locks"), holder.pid(), System.currentTimeMillis() - 60_000);
        } catch (java.io.UncheckedIOException | java.nio.file.NoSuchFileException e) {
            // an entry vanished under the walk: the holder's own lease ran out before the step (a starved
            // JVM on a loaded machine) and the waiter broke it; the step was not tried
            throw spoiledBeforeTheStep(t, "an entry vanished under the walk: " + e.getMessage());
        }
        if (rewritten == 0) {
            if (holder.lost() || waiter.holds()) {
                throw spoiledBeforeTheStep(t, "no record of the holder left (told lost(): " + holder.lost() + ")");
            }
            return Outcome.unexpected(-1, "found no record of the holder (pid " + holder.pid() + ") to backdate");
        }
        if (!Trial.until(Target.LEASE.plus(Target.SLACK), waiter::holds)) {
            String h = holder.inc(Trial.ANSWER);
            holder.release(Trial.ANSWER);
            return t.judge(FaultSuiteTest.CLOCK, -1, "the backdated lock was not broken (the holder renewed first); its write: " + h);
        }
        long ms = (t.enteredAt(waiter.token()) - at) / 1_000_000;
        String w = waiter.inc(Trial.ANSWER);
        String h = holder.inc(Trial.ANSWER);
        boolean told = Trial.until(Target.LEASE.plus(Target.SLACK), holder::lost);
        if (!"INC 1".equals(w) || !"REFUSED".equals(h) || !told) {
            return Outcome.unexpected(ms, "after the clock step: waiter " + w + ", old holder " + h + ", old holder told: " + told);
        }
        return t.judge(FaultSuiteTest.CLOCK, ms, "taken " + ms + " ms after the step; old holder told, its write refused");
    }

    /** A lock that changed hands before the step: a retry if its holder was told first, else a failure. */
    private static RuntimeException spoiledBeforeTheStep(Trial t, String what) throws IOException {
        if (t.overlaps().isEmpty()) {
            return new Trial.Retry("the holder lost its lock before the clock step: " + what);
        }
        return new Trial.Failure("a second process held the lock while the first believed it held it: " + t.overlaps());
    }

    /** The lock directory is not writable, for a worker running as root without CAP_DAC_OVERRIDE. */
    static Outcome permissionDenied(Trial t) throws Exception {
        Path locks = Files.createDirectories(t.dir().resolve("locks"));
        Files.setPosixFilePermissions(locks, java.nio.file.attribute.PosixFilePermissions.fromString("r-xr-xr-x"));
        List<String> prefix = List.of();
        if (isRoot()) {
            prefix = List.of("/usr/bin/setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--inh-caps",
                    "-dac_override,-dac_read_search");
        }
        Worker w = t.worker(t.uri(), prefix);
        boolean answered = Trial.until(Trial.START, () -> w.holds() || w.failed() != null || w.ended());
        Files.setPosixFilePermissions(locks, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        if (w.holds()) {
            return Outcome.unexpected(-1, "a lock was taken in a directory the process may not write");
        }
        if (!answered || w.failed() == null) {
            return Outcome.unexpected(-1, "neither refused nor granted within " + Trial.START.toSeconds() + " s");
        }
        if (!w.failed().contains("LockBackendException")) {
            return Outcome.unexpected(-1, "refused with an unexpected error: " + w.failed());
        }
        return t.judge(FaultSuiteTest.PERMISSION, -1, "refused at once: " + shorten(w.failed()));
    }

    // ------------------------------------------------------------------ in this JVM

    /** Damaged artefacts where a lock was: empty, truncated, junk, a FIFO, a directory/file swapped. */
    static Outcome corrupted(Target target, String name, Path dir) throws Exception {
        List<String> results = new ArrayList<>();
        for (String kind : List.of("empty", "truncated", "junk", "fifo", "swapped")) {
            Path sub = dir.resolve(kind);
            Map<Path, Artefact> artefacts = artefactsOf(target, name, sub);
            for (Map.Entry<Path, Artefact> e : artefacts.entrySet()) {
                plant(kind, e.getKey(), e.getValue());
            }
            String result = acquireAfter(target, name, sub, "a " + kind + " artefact");
            if (result.startsWith("!")) {
                return Outcome.unexpected(-1, kind + ": " + result.substring(1));
            }
            results.add(kind + ": " + result);
        }
        return Outcome.held(-1, String.join("; ", results));
    }

    /** A symbolic link and a hard link to a victim file planted at every artefact. */
    static Outcome plantedLinks(Target target, String name, Path dir) throws Exception {
        List<String> results = new ArrayList<>();
        for (String kind : List.of("symlink", "hardlink")) {
            Path sub = dir.resolve(kind);
            Path victim = Files.write(dir.resolve(kind + "-victim"), PRECIOUS);
            Map<Path, Artefact> artefacts = artefactsOf(target, name, sub);
            for (Path p : artefacts.keySet()) {
                deleteRecursively(p);
                if (kind.equals("symlink")) {
                    Files.createSymbolicLink(p, victim);
                } else {
                    Files.createLink(p, victim);
                }
            }
            String result = acquireAfter(target, name, sub, "a planted " + kind);
            if (result.startsWith("!")) {
                return Outcome.unexpected(-1, kind + ": " + result.substring(1));
            }
            if (!Files.exists(victim) || !Arrays.equals(PRECIOUS, Files.readAllBytes(victim))) {
                return Outcome.unexpected(-1, "the victim of a planted " + kind + " was written or removed");
            }
            results.add(kind + ": " + result);
        }
        return Outcome.held(-1, String.join("; ", results) + "; the victim file untouched");
    }

    /** A full disk: a small tmpfs filled to the last byte; then space freed again. */
    static Outcome diskFull(Target target, String name, Path dir) throws Exception {
        Path mount = Files.createDirectories(dir.resolve("tmpfs"));
        if (!isRoot() || run("mount", "-t", "tmpfs", "-o", "size=256k,nr_inodes=64", "kanuki-faults", mount.toString()) != 0) {
            return Outcome.notApplicable("not root / mount not permitted");
        }
        try {
            Path filler = mount.resolve("filler");
            try (OutputStream out = Files.newOutputStream(filler)) {
                byte[] block = new byte[4096];
                while (true) {
                    out.write(block);
                }
            } catch (IOException full) {
                // the disk is full
            }
            String full = acquireIn(target, name, mount.resolve("locks"), "a full disk");
            if (full.startsWith("!")) {
                return Outcome.unexpected(-1, "full: " + full.substring(1));
            }
            Files.delete(filler);
            String freed = acquireIn(target, name, mount.resolve("locks"), "space freed again");
            if (freed.startsWith("!") || freed.startsWith("refused")) {
                return Outcome.unexpected(-1, "after space was freed: " + freed.replace("!", ""));
            }
            return Outcome.held(-1, "full: " + full + "; space freed: " + freed);
        } finally {
            run("umount", "-l", mount.toString());
        }
    }

    /** Names that break paths, keys and parsers: each is exclusive, none collides with another, none escapes. */
    static Outcome hostileNames(Target target, Path dir) throws Exception {
        List<String> names = List.of("../../../etc/passwd", "a/b", "a\\b", "名前 🔒 ümlaut", "tab\tnew\nline",
                "x".repeat(1000), ".", "..", "CON", "nul\u0000byte", "Case", "case", "{braces}:*?\"<>|", "%2F..%2F", " ");
        Path locks = Files.createDirectories(dir.resolve("locks"));
        String uri = target.uri(locks);
        List<String> refused = new ArrayList<>();
        Map<String, LockHandle> held = new LinkedHashMap<>();
        try (LockProvider a = LockProvider.open(uri); LockProvider b = LockProvider.open(uri)) {
            for (String n : names) {
                try {
                    a.lock(n).acquire(Duration.ofSeconds(20)).getClass();
                    held.put(n, null);
                } catch (IllegalArgumentException | LockBackendException e) {
                    refused.add(printable(n) + " (" + e.getClass().getSimpleName() + ")");
                }
            }
            // a.lock(n) handles are kept by the provider; ask b for every held name: all must be busy
            for (String n : held.keySet()) {
                if (b.lock(n).tryAcquire().isPresent()) {
                    return Outcome.unexpected(-1, "two holders of the name " + printable(n));
                }
            }
            if (b.lock("control").tryAcquire().map(h -> {
                h.close();
                return true;
            }).isEmpty()) {
                return Outcome.unexpected(-1, "a free name was busy while the hostile names were held (collision)");
            }
        }
        try (Stream<Path> around = Files.list(dir)) {
            List<Path> escaped = around.filter(p -> !p.getFileName().toString().equals("locks")).toList();
            if (!escaped.isEmpty()) {
                return Outcome.unexpected(-1, "a name escaped the lock directory: " + escaped);
            }
        }
        return Outcome.held(-1, held.size() + " of " + names.size() + " names held exclusively, no collision"
                + (refused.isEmpty() ? "" : "; refused with a clear error: " + String.join(", ", refused)));
    }

    // ------------------------------------------------------------------ helpers

    private record Artefact(boolean directory, String link, byte[] content) {
    }

    /** Takes and releases the lock in a fresh directory, noting every artefact seen while it was held. */
    private static Map<Path, Artefact> artefactsOf(Target target, String name, Path sub) throws IOException {
        Path locks = Files.createDirectories(sub.resolve("locks"));
        Map<Path, Artefact> seen = new LinkedHashMap<>();
        try (LockProvider p = LockProvider.open(target.uri(locks));
             LockHandle h = p.lock(name).acquire(Duration.ofSeconds(30))) {
            h.fencingToken();
            try (Stream<Path> top = Files.list(locks)) {
                for (Path e : top.toList()) {
                    seen.put(e, describe(e));
                }
            }
        }
        return seen;
    }

    private static Artefact describe(Path p) throws IOException {
        if (Files.isSymbolicLink(p)) {
            return new Artefact(false, Files.readSymbolicLink(p).toString(), null);
        }
        if (Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
            return new Artefact(true, null, null);
        }
        return new Artefact(false, null, Files.readAllBytes(p));
    }

    private static void plant(String kind, Path p, Artefact a) throws IOException, InterruptedException {
        List<Path> children = new ArrayList<>();
        if (a.directory() && Files.isDirectory(p, LinkOption.NOFOLLOW_LINKS)) {
            children = regularFiles(p);
        }
        Map<Path, byte[]> childContent = new LinkedHashMap<>();
        for (Path c : children) {
            childContent.put(c, Files.readAllBytes(c));
        }
        deleteRecursively(p);
        Random random = new Random(p.hashCode());
        switch (kind) {
            case "fifo" -> run("mkfifo", p.toString());
            case "swapped" -> {
                if (a.directory()) {
                    Files.write(p, "a file where a directory was".getBytes(StandardCharsets.UTF_8));
                } else {
                    Files.createDirectory(p);
                }
            }
            default -> {
                if (a.directory()) {
                    Files.createDirectory(p);
                    for (Map.Entry<Path, byte[]> c : childContent.entrySet()) {
                        Files.write(c.getKey(), damage(kind, c.getValue(), random));
                    }
                } else if (a.link() != null) {
                    String text = new String(damage(kind, a.link().getBytes(StandardCharsets.UTF_8), random), StandardCharsets.ISO_8859_1)
                            .replace('\0', '_').replace('/', '_');
                    Files.createSymbolicLink(p, Path.of(text.isEmpty() ? "_" : text));
                } else {
                    Files.write(p, damage(kind, a.content(), random));
                }
            }
        }
    }

    private static byte[] damage(String kind, byte[] bytes, Random random) {
        return switch (kind) {
            case "empty" -> new byte[0];
            case "truncated" -> Arrays.copyOf(bytes, bytes.length / 2);
            default -> {
                byte[] junk = new byte[Math.max(16, bytes.length)];
                random.nextBytes(junk);
                yield junk;
            }
        };
    }

    /** Acquires after a planted fault. @return "N ms", "refused: …", or "!problem" for a violation */
    private static String acquireAfter(Target target, String name, Path sub, String what) throws Exception {
        return acquireIn(target, name, sub.resolve("locks"), what);
    }

    private static String acquireIn(Target target, String name, Path locks, String what) throws Exception {
        Duration bound = target.documentedBound().plus(Target.LEASE).plus(Target.SLACK);
        long start = System.nanoTime();
        CompletableFuture<String> attempt = CompletableFuture.supplyAsync(() -> {
            try (LockProvider p = LockProvider.open(target.uri(locks));
                 LockHandle h = p.lock(name).acquire(bound)) {
                h.fencingToken();
                h.verify();
                return (System.nanoTime() - start) / 1_000_000 + " ms";
            } catch (LockBackendException e) {
                return "refused (" + shorten(e.getMessage().replace(locks.toString(), "DIR"), 70) + ")";
            } catch (dev.kanuki.LockTimeoutException e) {
                return "!" + what + " blocked the lock for " + bound.toMillis() + " ms without an error";
            } catch (RuntimeException e) {
                return "!" + what + " gave " + e;
            }
        });
        try {
            return attempt.get(bound.toMillis() + 30_000, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return "!" + what + " made the acquisition hang (no answer after " + (bound.toMillis() + 30_000) + " ms)";
        } catch (ExecutionException e) {
            return "!" + what + " gave " + e.getCause();
        }
    }

    /**
     * Rewrites every ttl record of {@code pid} under {@code dir} with another lease end, the
     * record's checksum recomputed, in place (the same length: lease ends are 13 digits).
     */
    static int backdateRecords(Path dir, long pid, long leaseUntil) throws IOException {
        int count = 0;
        List<Path> all;
        try (Stream<Path> walk = Files.walk(dir)) {
            all = walk.toList();
        }
        for (Path p : all) {
            if (Files.isSymbolicLink(p)) {
                String text = Files.readSymbolicLink(p).toString();
                String changed = backdate(text, pid, leaseUntil);
                if (!changed.equals(text)) {
                    Path tmp = p.resolveSibling(p.getFileName() + ".faults-tmp");
                    Files.createSymbolicLink(tmp, Path.of(changed));
                    Files.move(tmp, p, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
                    count++;
                }
            } else if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                String text = new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
                String changed = backdate(text, pid, leaseUntil);
                if (!changed.equals(text) && changed.length() == text.length()) {
                    try (FileChannel ch = FileChannel.open(p, StandardOpenOption.WRITE)) {
                        ch.write(ByteBuffer.wrap(changed.getBytes(StandardCharsets.UTF_8)), 0);
                    }
                    count++;
                }
            }
        }
        return count;
    }

    /**
     * Lines of {@code pid} get {@code leaseUntil}: records {@code K1 id pid acquired-ms lease-until-ms
     * host name [token] crc32c}, and in a queue file its arrival line {@code A <record> crc32c} and
     * renewal lines {@code N id lease-until crc32c}.
     */
    static String backdate(String text, long pid, long leaseUntil) {
        String[] lines = text.split("(?<=\n)", -1);
        java.util.Set<String> ids = new java.util.HashSet<>();
        for (String line : lines) {
            String[] f = line.strip().split(" ");
            if (f.length >= 9 && f[0].equals("A") && f[3].equals(Long.toString(pid))) {
                ids.add(f[2]);
            }
        }
        StringBuilder out = new StringBuilder();
        for (String line : lines) {
            boolean nl = line.endsWith("\n");
            String body = nl ? line.substring(0, line.length() - 1) : line;
            String[] f = body.split(" ");
            if (f.length >= 8 && f[0].equals("K1")) {
                body = record(f, pid, leaseUntil);
            } else if (f.length >= 9 && f[0].equals("A") && ids.contains(f[2])) {
                String inner = record(Arrays.copyOfRange(f, 1, f.length - 1), pid, leaseUntil);
                body = withCrc("A " + inner);
            } else if (f.length == 4 && f[0].equals("N") && ids.contains(f[1]) && f[2].length() == 13) {
                body = withCrc("N " + f[1] + " " + leaseUntil);
            }
            out.append(body).append(nl ? "\n" : "");
        }
        return out.toString();
    }

    private static String record(String[] f, long pid, long leaseUntil) {
        if (!f[2].equals(Long.toString(pid)) || f[4].length() != 13) {
            return String.join(" ", f);
        }
        f[4] = Long.toString(leaseUntil);
        return withCrc(String.join(" ", Arrays.copyOf(f, f.length - 1)));
    }

    private static String withCrc(String head) {
        CRC32C crc = new CRC32C();
        byte[] bytes = head.getBytes(StandardCharsets.UTF_8);
        crc.update(bytes, 0, bytes.length);
        return head + " " + HexFormat.of().toHexDigits((int) crc.getValue());
    }

    static List<Path> regularFiles(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            return walk.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)).toList();
        }
    }

    private static String names(List<Path> files) {
        return files.stream().map(p -> p.getFileName().toString()).toList().toString();
    }

    static void deleteRecursively(Path p) throws IOException {
        if (!Files.exists(p, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(p)) {
            for (Path q : walk.sorted(Comparator.reverseOrder()).toList()) {
                try {
                    Files.delete(q);
                } catch (DirectoryNotEmptyException e) {
                    // a holder wrote into it meanwhile: leave it
                }
            }
        } catch (FileSystemException e) {
            Files.deleteIfExists(p);
        }
    }

    static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    static int run(String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        return p.waitFor(30, TimeUnit.SECONDS) ? p.exitValue() : -1;
    }

    private static String printable(String name) {
        String s = name.length() > 20 ? name.substring(0, 8) + "…(" + name.length() + " chars)" : name;
        return "'" + s.replace("\t", "\\t").replace("\n", "\\n").replace("\0", "\\0") + "'";
    }

    static String shorten(String s) {
        return shorten(s, 110);
    }

    static String shorten(String s, int max) {
        String one = String.valueOf(s).replace('\n', ' ').replace('|', '/');
        return one.length() > max ? one.substring(0, max) + "…" : one;
    }
}
