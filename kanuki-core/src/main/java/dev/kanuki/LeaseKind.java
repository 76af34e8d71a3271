package dev.kanuki;

/** How a backend keeps a lock alive. */
public enum LeaseKind {
    /**
     * The lock lasts as long as the holder's process, connection or session: the OS or the
     * server releases it when the holder dies (OS file locks, SQLite, PostgreSQL, ZooKeeper).
     */
    SESSION,
    /**
     * The lock expires unless renewed: kanuki's watchdog renews it while the handle is open,
     * and a crashed holder's lock frees when its lease runs out (mkdir, memcached, Redis).
     */
    TTL,
    /** The lock lives in this process's memory only ({@code mem:}). */
    IN_PROCESS
}
