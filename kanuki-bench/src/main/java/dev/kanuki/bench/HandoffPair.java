package dev.kanuki.bench;

import dev.kanuki.LockProvider;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;

/**
 * The two parties of one handoff measurement: this thread's {@link HandoffRing} (on lock 0) and
 * a partner (a thread of this JVM, or a {@link HandoffPartner} process) stepping the same ring
 * from lock 1. Each {@link #step()} is one round trip, two handoffs.
 */
final class HandoffPair implements AutoCloseable {
    /** Every kind of pair, as {@link HandoffBench}'s {@code impl} parameter names them. */
    static final List<String> KINDS = List.of(
            "threadsRawReentrantLock", "threadsKanukiMem", "threadsKanukiFileOs",
            "processesRawFileChannel", "processesRawFileChannelWithRecord", "processesKanukiFileOs");

    /**
     * {@code processesKanukiFile:STRATEGY}: this JVM and a partner JVM on a ttl strategy of
     * {@code file:}, where a waiter polls ({@link PollingHandoffBench}).
     */
    static final String POLLING_PREFIX = "processesKanukiFile:";

    /** {@code processes:PARTNERKIND}: this JVM and a partner JVM, any {@link HandoffParty#forProcess} kind. */
    static final String PROCESSES_PREFIX = "processes:";

    private static final long START_TIMEOUT_SECONDS = 60;
    /** System property with extra JVM options for a partner process (e.g. GC logging). */
    static final String PARTNER_JVM_ARGS = "kanuki.bench.partnerJvmArgs";

    /** @return {@link #KINDS}, for a parameterised test */
    static List<String> kinds() {
        return KINDS;
    }

    private final HandoffRing ring;
    private final HandoffParty mainParty;
    private final Partner partner;
    private final LockProvider sharedProvider;
    private final Path dir;

    private HandoffPair(HandoffRing ring, HandoffParty mainParty, Partner partner,
            LockProvider sharedProvider, Path dir) {
        this.ring = ring;
        this.mainParty = mainParty;
        this.partner = partner;
        this.sharedProvider = sharedProvider;
        this.dir = dir;
    }

    /**
     * Sets up both parties and returns once the partner holds its starting lock.
     *
     * @param kind one of {@link #KINDS}
     */
    static HandoffPair open(String kind) throws Exception {
        switch (kind) {
            case "threadsRawReentrantLock": {
                ReentrantLock[] locks = new ReentrantLock[HandoffParty.LOCKS];
                for (int i = 0; i < locks.length; i++) {
                    locks[i] = new ReentrantLock();
                }
                return withThread(() -> new HandoffParty.ReentrantLockParty(locks), null, null);
            }
            case "threadsKanukiMem": {
                // A namespace of its own, so nothing else in this JVM shares its locks.
                LockProvider provider = LockProvider.open("mem:handoff-" + UUID.randomUUID());
                return withThread(() -> HandoffParty.KanukiParty.sharing(provider), provider, null);
            }
            case "threadsKanukiFileOs": {
                Path dir = BenchFiles.newTempDir("kanuki-handoff");
                LockProvider provider;
                try {
                    provider = LockProvider.open(HandoffParty.fileOsUri(dir));
                } catch (RuntimeException e) {
                    BenchFiles.deleteQuietly(dir);
                    throw e;
                }
                return withThread(() -> HandoffParty.KanukiParty.sharing(provider), provider, dir);
            }
            case "processesRawFileChannel":
                return withProcess("rawFileChannel");
            case "processesRawFileChannelWithRecord":
                return withProcess("rawFileChannelWithRecord");
            case "processesKanukiFileOs":
                return withProcess("kanukiFileOs");
            default:
                if (kind.startsWith(PROCESSES_PREFIX)) {
                    return withProcess(kind.substring(PROCESSES_PREFIX.length()));
                }
                if (kind.startsWith(POLLING_PREFIX)) {
                    return withProcess(HandoffParty.TTL_KIND_PREFIX + kind.substring(POLLING_PREFIX.length()));
                }
                throw new IllegalArgumentException("unknown handoff kind '" + kind + "'; one of " + KINDS
                        + " or " + POLLING_PREFIX + "STRATEGY");
        }
    }

    private static HandoffPair withThread(Supplier<HandoffParty> parties, LockProvider provider, Path dir)
            throws Exception {
        HandoffParty mine = null;
        PartnerThread partner = null;
        try {
            mine = parties.get();
            HandoffRing ring = new HandoffRing(mine, 0);
            partner = new PartnerThread(parties);
            partner.start();
            return new HandoffPair(ring, mine, partner, provider, dir);
        } catch (Exception | Error e) {
            if (partner != null) {
                partner.stop();
            }
            if (mine != null) {
                mine.close();
            }
            if (partner != null) {
                partner.awaitEnd();
            }
            if (provider != null) {
                provider.close();
            }
            BenchFiles.deleteQuietly(dir);
            throw e;
        }
    }

    private static HandoffPair withProcess(String kind) throws Exception {
        Path dir = BenchFiles.newTempDir("kanuki-handoff");
        HandoffParty mine = null;
        try {
            mine = HandoffParty.forProcess(kind, dir);
            HandoffRing ring = new HandoffRing(mine, 0);
            PartnerProcess partner = PartnerProcess.start(kind, dir);
            return new HandoffPair(ring, mine, partner, null, dir);
        } catch (Exception | Error e) {
            if (mine != null) {
                mine.close();
            }
            BenchFiles.deleteQuietly(dir);
            throw e;
        }
    }

    /** One round trip: two handoffs. */
    void step() throws Exception {
        ring.step();
    }

    /** Throws when the partner has died, so a broken run fails instead of measuring nothing. */
    void checkPartner() {
        partner.check();
    }

    @Override
    public void close() throws Exception {
        try {
            partner.stop();
            mainParty.close();
            partner.awaitEnd();
        } finally {
            if (sharedProvider != null) {
                sharedProvider.close();
            }
            BenchFiles.deleteQuietly(dir);
        }
    }

    /** The other party. */
    private interface Partner {
        /** Throws when the partner failed or ended. */
        void check();

        /** Tells the partner to stop; called while the main party still holds its lock. */
        void stop() throws Exception;

        /** Waits for the partner to end; called after the main party released everything. */
        void awaitEnd() throws Exception;
    }

    /** A partner thread in this JVM, with a party of its own over the same locks. */
    private static final class PartnerThread implements Partner {
        private final Supplier<HandoffParty> parties;
        private final CountDownLatch ready = new CountDownLatch(1);
        private final Thread thread;
        private volatile boolean stopped;
        private volatile Throwable failure;

        PartnerThread(Supplier<HandoffParty> parties) {
            this.parties = parties;
            this.thread = new Thread(this::run, "handoff-partner");
            this.thread.setDaemon(true);
        }

        void start() throws InterruptedException {
            thread.start();
            if (!ready.await(START_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("the partner thread did not take its first lock");
            }
            check();
        }

        private void run() {
            try (HandoffParty party = parties.get()) {
                HandoffRing ring = new HandoffRing(party, 1);
                ready.countDown();
                while (!stopped) {
                    ring.step();
                }
            } catch (Throwable t) {
                if (!stopped) {
                    failure = t;
                }
            } finally {
                ready.countDown();
            }
        }

        @Override
        public void check() {
            Throwable t = failure;
            if (t != null) {
                throw new IllegalStateException("the partner thread failed: " + t, t);
            }
            if (!thread.isAlive()) {
                throw new IllegalStateException("the partner thread has stopped");
            }
        }

        /**
         * Stops the partner gently: it sees the flag after its next step, which it can finish
         * once the main party releases its lock (which {@link HandoffPair#close()} does next),
         * so it is interrupted only if it does not end by itself.
         */
        @Override
        public void stop() {
            stopped = true;
        }

        @Override
        public void awaitEnd() throws InterruptedException {
            thread.join(TimeUnit.SECONDS.toMillis(10));
            if (thread.isAlive()) {
                thread.interrupt();
                thread.join(TimeUnit.SECONDS.toMillis(10));
            }
        }
    }

    /** A {@link HandoffPartner} process started from this JVM's own class path. */
    private static final class PartnerProcess implements Partner {
        private final Process process;

        private PartnerProcess(Process process) {
            this.process = process;
        }

        static PartnerProcess start(String kind, Path dir) throws Exception {
            String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
            // Default JVM options, like the JMH fork on the other side: the two sides stay
            // symmetrical, and a small heap would punish garbage that kanuki keeps alive.
            // -Dkanuki.bench.partnerJvmArgs="-Xlog:gc ..." adds options, e.g. to profile it.
            List<String> command = new ArrayList<>(List.of(java));
            String extra = System.getProperty(PARTNER_JVM_ARGS, "").trim();
            if (!extra.isEmpty()) {
                command.addAll(List.of(extra.split("\\s+")));
            }
            command.addAll(List.of("-cp", System.getProperty("java.class.path"),
                    HandoffPartner.class.getName(), kind, dir.toString(), "1"));
            ProcessBuilder builder = new ProcessBuilder(command);
            builder.redirectError(ProcessBuilder.Redirect.INHERIT);
            Process process = builder.start();
            BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            String line;
            try {
                line = CompletableFuture.supplyAsync(() -> {
                    try {
                        return out.readLine();
                    } catch (IOException e) {
                        return null;
                    }
                }).get(START_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            } catch (Exception e) {
                process.destroyForcibly();
                throw new IllegalStateException("the partner process did not start: " + e, e);
            }
            if (!HandoffPartner.READY.equals(line)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
                throw new IllegalStateException("the partner process did not start (said " + line
                        + (process.isAlive() ? "" : ", exit code " + process.exitValue()) + "); its stderr is above");
            }
            return new PartnerProcess(process);
        }

        @Override
        public void check() {
            if (!process.isAlive()) {
                throw new IllegalStateException("the partner process died, exit code " + process.exitValue());
            }
        }

        @Override
        public void stop() throws Exception {
            process.getOutputStream().close(); // it halts at the end of its standard input
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }

        @Override
        public void awaitEnd() {
            // stop() already waited: a process can be ended while the main party holds its lock
        }
    }
}
