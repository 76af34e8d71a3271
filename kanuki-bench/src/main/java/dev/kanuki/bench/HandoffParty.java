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
     * @param kind {@code rawFileChannel}, {@code rawFileChannelWithRecord}, {@code kanukiFileOs} or
     *     {@code kanukiFile:STRATEGY} (a ttl strategy)
     * @param dir the directory both processes share
     */
    static HandoffParty forProcess(String kind, Path dir) throws IOException {
        return switch (kind) {
            case "rawFileChannel" -> new FileChannelParty(dir, false);
            case "rawFileChannelWithRecord" -> new FileChannelParty(dir, true);
            case "rawFileChannelWithRecordAndCheck" -> new FileChannelParty(dir, true, true);
            case "kanukiFileOs" -> KanukiParty.owning(LockProvider.open(fileOsUri(dir)));
            default -> {
                if (kind.startsWith(TTL_KIND_PREFIX)) {
                    yield KanukiParty.owning(LockProvider.open(fileTtlUri(dir, kind.substring(TTL_KIND_PREFIX.length()))));
                }
                if (kind.startsWith(KANUKI_URI_PREFIX)) {
                    yield KanukiParty.owning(LockProvider.open(kind.substring(KANUKI_URI_PREFIX.length())));
                }
                if (kind.startsWith(PG_ADVISORY_PREFIX)) {
                    yield new PgAdvisoryParty(kind.substring(PG_ADVISORY_PREFIX.length()));
                }
                if (kind.startsWith(ZooKeeperByHand.RAW_PREFIX) || kind.startsWith(ZooKeeperByHand.CURATOR_PREFIX)) {
                    yield ZooKeeperHandoff.party(kind);
                }
                HandoffParty redis = RedisParties.forKind(kind); // redisRaw:URI, redisson:URI
                if (redis != null) {
                    yield redis;
                }
                throw new IllegalArgumentException("unknown handoff kind: " + kind);
            }
        };
    }

    /** A partner kind {@code kanukiFile:STRATEGY} is kanuki on a ttl strategy ({@link PollingHandoffBench}). */
    String TTL_KIND_PREFIX = "kanukiFile:";

    /** A partner kind {@code kanuki:URI} is kanuki on any backend URI ({@link PgHandoffBench}). */
    String KANUKI_URI_PREFIX = "kanuki:";

    /** A partner kind {@code pgAdvisory:JDBC-URL} is {@link PgAdvisoryParty} ({@link PgHandoffBench}). */
    String PG_ADVISORY_PREFIX = "pgAdvisory:";

    /** @return the kanuki URI of a ttl strategy both processes open */
    static String fileTtlUri(Path dir, String strategy) {
        return "file:" + dir + "?strategy=" + strategy;
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
        private final Path[] paths = new Path[LOCKS];
        private final Object[] keys = new Object[LOCKS];
        private final FileLock[] held = new FileLock[LOCKS];
        private final OwnerRecordByHand record;
        private final boolean check;

        FileChannelParty(Path dir, boolean withRecord) throws IOException {
            this(dir, withRecord, false);
        }

        /**
         * @param withRecord write the owner/fencing record under the lock (one {@code pread}, one {@code pwrite})
         * @param withCheck also check, under the lock, that the path still names the file locked
         *     (one {@code lstat}): what makes removing a lock file safe, as kanuki does
         */
        FileChannelParty(Path dir, boolean withRecord, boolean withCheck) throws IOException {
            this.record = withRecord ? new OwnerRecordByHand() : null;
            this.check = withCheck;
            for (int i = 0; i < LOCKS; i++) {
                paths[i] = dir.resolve(lockName(i) + ".raw");
                channels[i] = FileChannel.open(paths[i],
                        StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE);
                keys[i] = java.nio.file.Files.readAttributes(paths[i], java.nio.file.attribute.BasicFileAttributes.class,
                        java.nio.file.LinkOption.NOFOLLOW_LINKS).fileKey();
            }
        }

        @Override
        public void lock(int i) throws IOException {
            held[i] = channels[i].lock();
            if (check) {
                var now = java.nio.file.Files.readAttributes(paths[i], java.nio.file.attribute.BasicFileAttributes.class,
                        java.nio.file.LinkOption.NOFOLLOW_LINKS);
                if (!now.isRegularFile() || !keys[i].equals(now.fileKey())) {
                    throw new IOException(paths[i] + " was removed or replaced");
                }
            }
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

    /**
     * Raw blocking {@code pg_advisory_lock(key)} / {@code pg_advisory_unlock(key)} on one
     * connection of this party (advisory locks belong to the session), keys kanuki does not use.
     */
    final class PgAdvisoryParty implements HandoffParty {
        private static final long KEY_BASE = 0x6b616e756b690000L;
        private final java.sql.Connection connection;
        private final java.sql.PreparedStatement lock;
        private final java.sql.PreparedStatement unlock;

        PgAdvisoryParty(String jdbcUrl) {
            try {
                connection = java.sql.DriverManager.getConnection(jdbcUrl);
                lock = connection.prepareStatement("SELECT pg_advisory_lock(?)");
                unlock = connection.prepareStatement("SELECT pg_advisory_unlock(?)");
            } catch (java.sql.SQLException e) {
                throw new IllegalStateException("cannot connect to " + jdbcUrl + ": " + e.getMessage(), e);
            }
        }

        @Override
        public void lock(int i) throws java.sql.SQLException {
            lock.setLong(1, KEY_BASE + i);
            try (java.sql.ResultSet rs = lock.executeQuery()) {
                rs.next();
            }
        }

        @Override
        public void unlock(int i) throws java.sql.SQLException {
            unlock.setLong(1, KEY_BASE + i);
            try (java.sql.ResultSet rs = unlock.executeQuery()) {
                if (!rs.next() || !rs.getBoolean(1)) {
                    throw new IllegalStateException("advisory lock " + i + " was not held");
                }
            }
        }

        @Override
        public void close() throws java.sql.SQLException {
            connection.close(); // ends the session and every advisory lock it held
        }
    }
}
