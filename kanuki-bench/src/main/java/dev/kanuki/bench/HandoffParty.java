package dev.kanuki.bench;

import dev.kanuki.DistributedLock;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One party's view of the {@link #LOCKS} locks of a {@link HandoffRing}: the thin facade that
 * lets the handoff benchmark run the same protocol over kanuki and over raw primitives. One
 * instance per party (thread or process); not thread-safe.
 */
interface HandoffParty extends AutoCloseable {
    /** How many locks the ring has. Three is the fewest that lets two parties alternate. */
    int LOCKS = 3;

    /** Waits without limit (kanuki: a long timeout) for lock {@code i}. */
    void lock(int i) throws Exception;

    /** Releases lock {@code i}, which this party holds. */
    void unlock(int i) throws Exception;

    /** Releases whatever this party still holds and frees what it opened. */
    @Override
    void close() throws Exception;

    /** The names kanuki's locks have, and the raw lock files' base names. */
    static String lockName(int i) {
        return "handoff-" + i;
    }

    /**
     * Makes the party a partner process runs.
     *
     * @param kind {@code rawFileChannel}, {@code rawFileChannelWithRecord} or {@code kanukiFileOs}
     * @param dir the directory both processes share
     */
    static HandoffParty forProcess(String kind, Path dir) throws IOException {
        return switch (kind) {
            case "rawFileChannel" -> new FileChannelParty(dir, false);
            case "rawFileChannelWithRecord" -> new FileChannelParty(dir, true);
            case "kanukiFileOs" -> KanukiParty.owning(LockProvider.open(fileOsUri(dir)));
            default -> throw new IllegalArgumentException("unknown handoff kind: " + kind);
        };
    }

    /** @return the kanuki URI both processes open */
    static String fileOsUri(Path dir) {
        return "file:" + dir + "?strategy=os";
    }

    /** {@link ReentrantLock}s shared by the parties (threads of one JVM). */
    final class ReentrantLockParty implements HandoffParty {
        private final ReentrantLock[] locks;

        ReentrantLockParty(ReentrantLock[] locks) {
            this.locks = locks;
        }

        @Override
        public void lock(int i) throws InterruptedException {
            locks[i].lockInterruptibly();
        }

        @Override
        public void unlock(int i) {
            locks[i].unlock();
        }

        @Override
        public void close() {
            for (ReentrantLock lock : locks) {
                while (lock.isHeldByCurrentThread()) {
                    lock.unlock();
                }
            }
        }
    }

    /** kanuki locks; the {@link DistributedLock}s are made once, the handles per acquisition. */
    final class KanukiParty implements HandoffParty {
        /** Long enough never to fire in a healthy run, short enough that a broken one ends. */
        private static final Duration TIMEOUT = Duration.ofSeconds(30);
        private final LockProvider owned;
        private final DistributedLock[] locks = new DistributedLock[LOCKS];
        private final LockHandle[] handles = new LockHandle[LOCKS];

        private KanukiParty(LockProvider provider, boolean owns) {
            this.owned = owns ? provider : null;
            for (int i = 0; i < LOCKS; i++) {
                locks[i] = provider.lock(lockName(i));
            }
        }

        /** A party on a provider shared with other parties (threads); closing leaves it open. */
        static KanukiParty sharing(LockProvider provider) {
            return new KanukiParty(provider, false);
        }

        /** A party that closes its provider when it closes (a partner process). */
        static KanukiParty owning(LockProvider provider) {
            return new KanukiParty(provider, true);
        }

        @Override
        public void lock(int i) {
            handles[i] = locks[i].acquire(TIMEOUT);
        }

        @Override
        public void unlock(int i) {
            handles[i].close();
            handles[i] = null;
        }

        @Override
        public void close() {
            for (int i = 0; i < LOCKS; i++) {
                if (handles[i] != null) {
                    handles[i].close();
                    handles[i] = null;
                }
            }
            if (owned != null) {
                owned.close();
            }
        }
    }

    /**
     * Raw blocking {@link FileChannel#lock()} on one file per lock, channels opened once; with
     * {@code withRecord}, also the owner/fencing record kanuki's {@code os} strategy keeps
     * ({@link OwnerRecordByHand}), rewritten under every acquisition.
     */
    final class FileChannelParty implements HandoffParty {
        private final FileChannel[] channels = new FileChannel[LOCKS];
        private final FileLock[] held = new FileLock[LOCKS];
        private final OwnerRecordByHand record;

        FileChannelParty(Path dir, boolean withRecord) throws IOException {
            this.record = withRecord ? new OwnerRecordByHand() : null;
            for (int i = 0; i < LOCKS; i++) {
                channels[i] = FileChannel.open(dir.resolve(lockName(i) + ".raw"),
                        StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
            }
        }

        @Override
        public void lock(int i) throws IOException {
            held[i] = channels[i].lock();
            if (record != null) {
                record.stamp(channels[i]);
            }
        }

        @Override
        public void unlock(int i) throws IOException {
            held[i].release();
            held[i] = null;
        }

        @Override
        public void close() throws IOException {
            for (int i = 0; i < LOCKS; i++) {
                if (held[i] != null && held[i].isValid()) {
                    held[i].release();
                }
                channels[i].close();
            }
        }
    }
}
