package dev.kanuki.example;

import dev.kanuki.Capabilities;
import dev.kanuki.LeaseKind;
import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockRequest;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The ttl backend of {@code docs/backend-guide.md}, compiled and run against the contract suite:
 * a key-value store (here a map in this JVM, standing in for a server) where a lock is a key with
 * an expiry. Each method is one step; the engine does the waiting, renewal and bookkeeping.
 */
final class ExampleLockBackend implements LockBackend {
    private static final Capabilities CAPABILITIES = Capabilities.builder(LeaseKind.TTL).ownerRecords().build();
    private static final Map<String, Store> STORES = new ConcurrentHashMap<>();

    /** One store: the "server" all providers on the same namespace talk to. */
    private static final class Store {
        final ConcurrentHashMap<String, Entry> keys = new ConcurrentHashMap<>();
        final ConcurrentHashMap<String, Long> lastToken = new ConcurrentHashMap<>();
        final AtomicLong tokens = new AtomicLong();
    }

    /** A key's value: who holds it, until when, with which token. */
    private record Entry(OwnerInfo owner, long token, Instant expires) {
        boolean expired() {
            return Instant.now().isAfter(expires);
        }
    }

    /** What a holder keeps: the name and its owner record, which identifies its key. */
    private record ExampleGrant(String name, OwnerInfo owner, long fencingToken) implements Grant {
    }

    private final String namespace;
    private final Store store;

    ExampleLockBackend(String namespace) {
        this.namespace = namespace;
        this.store = STORES.computeIfAbsent(namespace, n -> new Store());
    }

    @Override
    public Capabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public String scope() {
        return "example:" + namespace;
    }

    @Override
    public Optional<Grant> tryAcquire(LockRequest request) {
        OwnerInfo owner = request.owner();
        Entry entry = store.keys.compute(request.name(), (name, current) -> current == null || current.expired()
                ? new Entry(owner, store.tokens.incrementAndGet(), Instant.now().plus(request.lease()))
                : current);
        if (entry.owner() != owner) {
            return Optional.empty();
        }
        store.lastToken.put(request.name(), entry.token());
        return Optional.of(new ExampleGrant(request.name(), owner, entry.token()));
    }

    @Override
    public boolean renew(Grant grant, Duration lease) {
        ExampleGrant mine = (ExampleGrant) grant;
        Entry entry = store.keys.computeIfPresent(mine.name(), (name, current) -> current.owner() == mine.owner()
                && !current.expired() ? new Entry(current.owner(), current.token(), Instant.now().plus(lease)) : current);
        return entry != null && entry.owner() == mine.owner() && !entry.expired();
    }

    @Override
    public boolean verify(Grant grant) {
        ExampleGrant mine = (ExampleGrant) grant;
        Entry entry = store.keys.get(mine.name());
        return entry != null && entry.owner() == mine.owner() && !entry.expired();
    }

    @Override
    public void release(Grant grant) {
        ExampleGrant mine = (ExampleGrant) grant;
        store.keys.computeIfPresent(mine.name(), (name, current) -> current.owner() == mine.owner() ? null : current);
    }

    @Override
    public LockStatus status(String name) {
        Entry entry = store.keys.get(name);
        long last = store.lastToken.getOrDefault(name, -1L);
        if (entry == null) {
            return new LockStatus(name, LockStatus.State.FREE, Optional.empty(), last);
        }
        return new LockStatus(name, entry.expired() ? LockStatus.State.STALE : LockStatus.State.HELD,
                Optional.of(entry.owner()), last);
    }

    @Override
    public void close() {
        // nothing to free: a real backend closes its client here
    }
}
