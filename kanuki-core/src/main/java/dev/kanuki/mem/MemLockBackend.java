package dev.kanuki.mem;

import dev.kanuki.Capabilities;
import dev.kanuki.LeaseKind;
import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.ChangeSubscription;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * {@code mem:} and {@code mem:NAMESPACE}: locks in this JVM's memory. Every provider opened on
 * the same namespace shares the same locks. Supports exclusive, shared and semaphore modes,
 * wakes waiters without polling, and issues fencing tokens from one counter per namespace (so
 * they increase per name too). Nothing survives the JVM, and other processes see nothing.
 */
final class MemLockBackend implements LockBackend {
    private static final Capabilities CAPABILITIES = Capabilities.builder(LeaseKind.IN_PROCESS)
            .sharedLocks().semaphores().build();
    private static final ConcurrentHashMap<String, Namespace> NAMESPACES = new ConcurrentHashMap<>();
    private static final int KEEP_IDLE = 4096;

    private final String namespaceName;
    private final Namespace namespace;

    MemLockBackend(String namespaceName) {
        this.namespaceName = namespaceName;
        this.namespace = NAMESPACES.computeIfAbsent(namespaceName, n -> new Namespace());
    }

    /** The locks of one namespace. */
    private static final class Namespace {
        final ConcurrentHashMap<Key, Entry> entries = new ConcurrentHashMap<>();
        final AtomicLong fencing = new AtomicLong();
    }

    /**
     * One name's state; {@link #lock} guards it, {@link #changed} wakes blocked waiters. Not the
     * monitor: {@link #awaitAcquire} waits, and a virtual thread waiting inside
     * {@code synchronized} pins its carrier thread on JDK 21 to 23.
     */
    private static final class Entry {
        final ReentrantLock lock = new ReentrantLock();
        final Condition changed = lock.newCondition();
        MemGrant exclusive;
        int shared;
        int permitsTaken;
        long lastToken;
        boolean removed;
        /** Waiters of other gates to tell when the state changes (see {@link #watchChanges}). */
        List<Runnable> watchers;

        boolean idle() {
            return exclusive == null && shared == 0 && permitsTaken == 0;
        }
    }

    private record MemGrant(Key key, Entry entry, LockMode mode, long fencingToken) implements Grant {
    }

    /**
     * Waiters wait without a thread: a release notifies them (see {@link #watchChanges}). The
     * blocking {@link #awaitAcquire} stays for callers that want it.
     */
    @Override
    public boolean blockingWait() {
        return false;
    }

    @Override
    public ChangeSubscription watchChanges(LockRequest request, Runnable onChange) {
        Key key = key(request);
        while (true) {
            Entry entry = namespace.entries.computeIfAbsent(key, k -> new Entry());
            entry.lock.lock();
            try {
                if (entry.removed) {
                    continue;
                }
                if (entry.watchers == null) {
                    entry.watchers = new ArrayList<>(1);
                }
                entry.watchers.add(onChange);
            } finally {
                entry.lock.unlock();
            }
            return () -> {
                entry.lock.lock();
                try {
                    if (entry.watchers != null) {
                        entry.watchers.remove(onChange);
                    }
                } finally {
                    entry.lock.unlock();
                }
            };
        }
    }

    @Override
    public Capabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public String scope() {
        return "mem:" + namespaceName;
    }

    /**
     * Locks and semaphores of one name are different entries; the name's cached hash is reused.
     * equals and hashCode are written out: on Java 17 the ones a record generates leave the
     * record's class in a JDK-wide method-handle cache, which would keep a redeployed
     * application's class loader alive.
     */
    private record Key(boolean permit, String name) {
        @Override
        public boolean equals(Object o) {
            return o instanceof Key k && k.permit == permit && k.name.equals(name);
        }

        @Override
        public int hashCode() {
            return permit ? ~name.hashCode() : name.hashCode();
        }
    }

    private static Key key(LockRequest request) {
        return new Key(request.mode() == LockMode.PERMIT, request.name());
    }

    @Override
    public Optional<Grant> tryAcquire(LockRequest request) {
        Key key = key(request);
        while (true) {
            Entry entry = namespace.entries.computeIfAbsent(key, k -> new Entry());
            entry.lock.lock();
            try {
                if (entry.removed) {
                    continue;
                }
                return Optional.ofNullable(take(key, entry, request));
            } finally {
                entry.lock.unlock();
            }
        }
    }

    private MemGrant take(Key key, Entry entry, LockRequest request) {
        switch (request.mode()) {
            case EXCLUSIVE -> {
                if (entry.exclusive != null || entry.shared > 0) {
                    return null;
                }
                long token = namespace.fencing.incrementAndGet();
                entry.lastToken = token;
                entry.exclusive = new MemGrant(key, entry, LockMode.EXCLUSIVE, token);
                return entry.exclusive;
            }
            case SHARED -> {
                if (entry.exclusive != null) {
                    return null;
                }
                entry.shared++;
                return new MemGrant(key, entry, LockMode.SHARED, entry.lastToken);
            }
            case PERMIT -> {
                if (entry.permitsTaken >= request.permits()) {
                    return null;
                }
                entry.permitsTaken++;
                long token = namespace.fencing.incrementAndGet();
                entry.lastToken = token;
                return new MemGrant(key, entry, LockMode.PERMIT, token);
            }
            default -> throw new IllegalStateException();
        }
    }

    @Override
    public Optional<Grant> awaitAcquire(LockRequest request, Duration maxWait) throws InterruptedException {
        Key key = key(request);
        long deadline = System.nanoTime() + maxWait.toNanos();
        while (true) {
            Entry entry = namespace.entries.computeIfAbsent(key, k -> new Entry());
            entry.lock.lock();
            try {
                while (!entry.removed) {
                    MemGrant grant = take(key, entry, request);
                    if (grant != null) {
                        return Optional.of(grant);
                    }
                    long remaining = deadline - System.nanoTime();
                    if (remaining <= 0) {
                        return Optional.empty();
                    }
                    entry.changed.awaitNanos(remaining);
                }
            } finally {
                entry.lock.unlock();
            }
        }
    }

    @Override
    public void release(Grant grant) {
        MemGrant g = (MemGrant) grant;
        Entry entry = g.entry();
        List<Runnable> watchers;
        entry.lock.lock();
        try {
            switch (g.mode()) {
                case EXCLUSIVE -> {
                    if (entry.exclusive == g) {
                        entry.exclusive = null;
                    }
                }
                case SHARED -> entry.shared = Math.max(0, entry.shared - 1);
                case PERMIT -> entry.permitsTaken = Math.max(0, entry.permitsTaken - 1);
                default -> throw new IllegalStateException();
            }
            if (entry.idle() && namespace.entries.size() > KEEP_IDLE && (entry.watchers == null || entry.watchers.isEmpty())) {
                // Tokens come from the namespace counter, so dropping an idle entry loses nothing;
                // idle entries are kept up to a bound so a hot name does not churn the map.
                entry.removed = true;
                namespace.entries.remove(g.key(), entry);
            }
            entry.changed.signalAll();
            watchers = entry.watchers == null || entry.watchers.isEmpty() ? null : List.copyOf(entry.watchers);
        } finally {
            entry.lock.unlock();
        }
        if (watchers != null) {
            watchers.forEach(Runnable::run);
        }
    }

    @Override
    public boolean verify(Grant grant) {
        MemGrant g = (MemGrant) grant;
        g.entry().lock.lock();
        try {
            return !g.entry().removed && (g.mode() != LockMode.EXCLUSIVE || g.entry().exclusive == g);
        } finally {
            g.entry().lock.unlock();
        }
    }

    @Override
    public LockStatus status(String name) {
        Entry entry = namespace.entries.get(new Key(false, name));
        if (entry == null) {
            return new LockStatus(name, LockStatus.State.FREE, Optional.<OwnerInfo>empty(), -1);
        }
        entry.lock.lock();
        try {
            LockStatus.State state = entry.exclusive != null ? LockStatus.State.HELD
                    : entry.shared > 0 ? LockStatus.State.HELD_SHARED : LockStatus.State.FREE;
            return new LockStatus(name, state, Optional.empty(), entry.lastToken);
        } finally {
            entry.lock.unlock();
        }
    }

    @Override
    public void close() {
        // Namespaces live as long as the JVM, like the locks of other providers on them.
    }
}
