package dev.kanuki.memcached;

import dev.kanuki.Capabilities;
import dev.kanuki.LeaseKind;
import dev.kanuki.LockLostException;
import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockMode;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.NameHints;
import dev.kanuki.spi.TokenOnDemandGrant;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * memcached locks, over memcached 1.6. A lock is one item, {@code kanuki.lock.DIGEST}, whose value
 * is the owner record; a name lives on the server the hash ring picks.
 *
 * <ul>
 *   <li>acquire, one round trip of two pipelined commands: {@code add LOCK 0 <ttl>} (stores only
 *       when absent) and {@code mg LOCK c v} (the item's CAS, and its value to prove it is
 *       ours);</li>
 *   <li>fencing token, on demand (the first {@link Grant#fencingToken()}), one round trip:
 *       {@code ma FENCE N<keep> T<keep> J<clock µs> v} (the fencing counter, created at the clock
 *       when missing, kept {@link #fenceKeepSeconds} past each increment), then
 *       {@code mg LOCK c}: the token counts only when our item is still there after the
 *       increment. Once a holder of a name asked, later acquisitions of that name here
 *       append the {@code ma} to the acquisition's round trip instead, until a holder releases
 *       without asking;</li>
 *   <li>renew: {@code mg LOCK T<ttl> c} (touch, then compare the CAS);</li>
 *   <li>release: {@code md LOCK C<cas>} (compare-and-delete); verify: {@code mg LOCK c};</li>
 *   <li>status: {@code mg LOCK v t} and {@code mg FENCE v}; list: {@code lru_crawler metadump hash};
 *       break: {@code md LOCK}.</li>
 * </ul>
 * Nothing here asks memcached to store a new copy of a held lock's item: in 1.6.18, a meta store
 * ({@code ms}, in any mode) that finds no memory for the new item unlinks the item already there.
 * The text {@code add} does not, and a touch or a delete allocates nothing, so a full cache
 * ({@code -M}) refuses new locks with an error and keeps the held ones.
 *
 * <p>CAS values are unique only within one server process (they restart from 1 when it
 * restarts): a grant is renewed, verified or released only on a connection to the same server
 * process that granted it ({@link ServerFacts#sameIncarnation}); after a restart it is lost.
 *
 * <p>memcached cannot notify: waiters poll, with the engine's backoff.
 */
final class MemcachedLockBackend implements LockBackend {
    private static final Logger LOG = LoggerFactory.getLogger(MemcachedLockBackend.class);
    private static final Capabilities CAPABILITIES = Capabilities.builder(LeaseKind.TTL)
            .crossProcess().persistentFencing().ownerRecords().build();
    /** memcached reads a larger expiry as an absolute Unix time. */
    static final long MAX_TTL_SECONDS = 30L * 24 * 60 * 60;
    /**
     * How far, in seconds, the real time may be ahead of a client's clock in microseconds
     * ({@link ServerFacts#clockMicros}: held within the window memcached's {@code stats} allows,
     * whose time is from 1 s before to 3 s after the real time), plus the 1 s tick of
     * memcached's expiry clock.
     */
    static final long CLOCK_WINDOW_SECONDS = 5;
    /** Lock items read per round trip while listing. */
    private static final int LIST_BATCH = 200;

    private final List<MemcachedNode> nodes;
    private final HashRing<MemcachedNode> ring;
    private final String scope;
    private final Duration timeout;
    /**
     * A fencing counter's expiry, set again by every increment: the URI's {@code fenceMargin}
     * plus {@link #CLOCK_WINDOW_SECONDS}. A counter re-made after it expired starts at the clock,
     * which has then passed its last number by the margin (a counter that ran ahead of the clock
     * is kept longer: see {@link #keepWhileAhead}).
     */
    private final long fenceKeepSeconds;
    /** Requests whose attempt failed after its add may have been stored: see {@link #abandon}. */
    private final Set<LockRequest> uncertain = ConcurrentHashMap.newKeySet();
    private static final int KEYS_REMEMBERED = 4096;
    private final Map<String, MemcachedKeys> keysByName = new ConcurrentHashMap<>();
    /** Names whose last holder here asked for a fencing token: their acquisitions take it at once. */
    private final NameHints hints = new NameHints(KEYS_REMEMBERED);
    private final ExecutorService cleanup = new ThreadPoolExecutor(0, 1, 10, TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(), r -> {
                Thread t = new Thread(r, "kanuki-memcached-cleanup");
                t.setDaemon(true);
                return t;
            });

    /**
     * @param nodes the servers, in the order written
     * @param timeout every command's deadline
     */
    MemcachedLockBackend(List<MemcachedNode> nodes, Duration timeout) {
        this(nodes, timeout, DEFAULT_FENCE_MARGIN);
    }

    /** How long a fence counter is kept after the clock passed its last number, by default. */
    static final Duration DEFAULT_FENCE_MARGIN = Duration.ofHours(1);

    /**
     * @param nodes the servers, in the order written
     * @param timeout every command's deadline
     * @param fenceMargin how long a fencing counter is kept after the clock passed its last
     *     number: the clock step back tokens survive once it expired
     */
    MemcachedLockBackend(List<MemcachedNode> nodes, Duration timeout, Duration fenceMargin) {
        this.fenceKeepSeconds = fenceKeepSeconds(fenceMargin);
        this.nodes = List.copyOf(nodes);
        Map<String, MemcachedNode> byServer = new LinkedHashMap<>();
        nodes.forEach(n -> byServer.put(n.server(), n));
        this.ring = new HashRing<>(byServer);
        this.scope = "memcached://" + String.join(",", byServer.keySet().stream().sorted().toList());
        this.timeout = timeout;
    }

    @Override
    public Capabilities capabilities() {
        return CAPABILITIES;
    }

    @Override
    public String scope() {
        return scope;
    }

    /**
     * memcached's expiry for a lease: whole seconds, rounded up, plus two. One because memcached's
     * clock ticks once a second (an item set with {@code T<n>} lives between n−1 and n seconds),
     * so the item outlives the lease; one more as the holder's margin: the engine reports the lock
     * lost when its lease runs out unrenewed, and a holder slowed by a loaded machine notices that
     * late (hundreds of ms were seen at load 20 on 2 vCPUs) — it must still stop before the item
     * can expire and another process take the lock. At most 30 days, beyond which memcached would
     * read the number as a date.
     *
     * @param lease the lease
     * @return the {@code T} flag's seconds, 3 to {@value #MAX_TTL_SECONDS}
     */
    static long ttlSeconds(Duration lease) {
        long millis = Math.max(0, lease.toMillis());
        long seconds = millis / 1000 + (millis % 1000 == 0 ? 0 : 1) + 2;
        return Math.max(3, Math.min(MAX_TTL_SECONDS, seconds));
    }

    /**
     * A name's keys, remembered for the names in use: the SHA-256 behind them was an eighth of an
     * acquisition's processor time. Bounded: forgotten all at once past {@value #KEYS_REMEMBERED}
     * names, so that a program locking ever new names (one per order) does not grow it forever.
     */
    private MemcachedKeys keysOf(String name) {
        MemcachedKeys keys = keysByName.get(name);
        if (keys == null) {
            if (keysByName.size() >= KEYS_REMEMBERED) {
                keysByName.clear();
            }
            keys = MemcachedKeys.of(name);
            keysByName.put(name, keys);
        }
        return keys;
    }

    MemcachedNode nodeFor(MemcachedKeys keys) {
        return ring.serverFor(keys.digest());
    }

    @Override
    public Optional<Grant> tryAcquire(LockRequest request) {
        if (request.mode() != LockMode.EXCLUSIVE) {
            throw new UnsupportedOperationException("memcached: only exclusive locks");
        }
        MemcachedKeys keys = keysOf(request.name());
        byte[] value = OwnerRecord.encode(request.owner(), request.name());
        long ttl = ttlSeconds(request.lease());
        MemcachedNode node = nodeFor(keys);
        boolean fence = hints.isFenced(request.name());
        MemcachedNode.Exchange x;
        try {
            // Without a token asked for by this name's holders, the add and the read of our item are
            // all. With one, the increment is pipelined with the add, so that an acquisition is one
            // round trip, and it runs whether or not the add stored. That is safe: a failed attempt
            // only skips a number, and tokens need to increase, not to be consecutive. The holder's
            // increment runs after its add and is answered before it can release; the next holder's
            // add can only succeed after that release, and its increment (with the acquisition or on
            // demand) comes later still: tokens rise from holder to holder. (A lock broken by force
            // within the microseconds between a holder's add and its increment could see the next
            // holder's token below the broken one's; the broken holder loses its lock at its next
            // renewal either way.) A missing counter starts at the clock: see increment().
            x = node.call(facts -> fence
                    ? List.of(MetaRequest.add(keys.lock(), value, ttl), MetaRequest.of("mg " + keys.lock() + " c v"),
                            increment(keys, facts))
                    : List.of(MetaRequest.add(keys.lock(), value, ttl), MetaRequest.of("mg " + keys.lock() + " c v")),
                    request.callTimeout(timeout)); // the caller's deadline, not only the server's timeout
        } catch (RuntimeException e) {
            uncertain.add(request);
            throw e;
        }
        MetaReply add = x.get(0);
        MetaReply item = x.get(1);
        if (!add.is("STORED") && !add.is("NOT_STORED")) {
            throw node.unexpected(add, "add " + keys.lock());
        }
        // Ours when it holds our record: stored just now, or by an earlier attempt of this request
        // whose answer was lost (the owner id is unique to the request). STORED but not ours: broken
        // by force in between, nothing is held.
        OptionalLong cas = item.number('c');
        if (!item.is("VA") || !Arrays.equals(item.value(), value) || cas.isEmpty()) {
            return Optional.empty();
        }
        long token = fence ? tokenOf(x.get(2)) : 0;
        MemcachedGrant grant = new MemcachedGrant(node, keys, request.name(), x.facts(), cas.getAsLong(), fence, token);
        if (token < 0) {
            release(grant); // a lock without a token must not be handed out
            throw node.unexpected(x.get(2), "ma " + keys.fence() + " (fencing counter)");
        }
        if (fence) {
            keepWhileAhead(node, keys, token, x.facts());
        }
        uncertain.remove(request);
        return Optional.of(grant);
    }

    /**
     * The fencing counter's increment; when the counter is missing (first use, a restart, an
     * eviction, a deletion, or {@link #fenceKeepSeconds} after its last increment, which sets its
     * expiry again: so names no longer used leave nothing) it starts at this server's clock in
     * microseconds ({@link ServerFacts}), above every token issued before as long as the name saw fewer than one token per
     * microsecond and the clocks did not go back.
     */
    private MetaRequest increment(MemcachedKeys keys, ServerFacts facts) {
        return MetaRequest.of("ma " + keys.fence() + " N" + fenceKeepSeconds + " T" + fenceKeepSeconds
                + " J" + facts.clockMicros() + " v");
    }

    /** {@return a counter's expiry for {@code fenceMargin}: rounded up to seconds, plus the clock window} */
    static long fenceKeepSeconds(Duration fenceMargin) {
        long margin = fenceMargin.getSeconds() + (fenceMargin.getNano() > 0 ? 1 : 0);
        return Math.min(MAX_TTL_SECONDS - 1, margin + CLOCK_WINDOW_SECONDS);
    }

    /**
     * A counter normally runs behind the clock (it starts at the clock and gains one per token).
     * One made by a client whose clock was ahead, or bumped faster than one per microsecond, runs
     * ahead: it must then outlive the increment's expiry until the clock has passed its number, or a
     * counter re-made at the clock would give smaller tokens. A touch extends it (rare: a round
     * trip more).
     */
    private void keepWhileAhead(MemcachedNode node, MemcachedKeys keys, long token, ServerFacts facts) {
        long aheadMicros = token - facts.clockMicros();
        if (aheadMicros <= 0) {
            return;
        }
        long keep = Math.min(MAX_TTL_SECONDS - 1, fenceKeepSeconds + aheadMicros / 1_000_000 + 1);
        MetaReply touched = node.call(f -> List.of(MetaRequest.of("mg " + keys.fence() + " T" + keep))).get(0);
        if (!touched.is("HD") && !touched.is("EN")) {
            LOG.warn("memcached at {}: could not extend the fencing counter {}: {}", node, keys.fence(), touched.code());
        }
    }

    /**
     * A token on demand: the increment, then a read of our item's CAS, in one round trip on the
     * server process that granted the lock. The number counts only when our item is still there
     * after the increment: then every later holder's add, and so its increment, comes after ours.
     * A number taken for a lost lock is skipped, which is harmless: tokens must rise, not be
     * consecutive.
     */
    private long issueToken(MemcachedGrant g) {
        MemcachedNode.Exchange x = g.node.call(facts -> facts.sameIncarnation(g.facts)
                ? List.of(increment(g.keys, facts), MetaRequest.of("mg " + g.keys.lock() + " c"))
                : List.of());
        if (x.replies().isEmpty()) {
            throw new LockLostException(g.name, "memcached at " + g.node + " restarted: its items, this lock's too,"
                    + " are gone; no fencing token was issued", null);
        }
        long token = tokenOf(x.get(0));
        if (token < 0) {
            throw g.node.unexpected(x.get(0), "ma " + g.keys.fence() + " (fencing counter)");
        }
        if (!isOurs(g, new MemcachedNode.Exchange(List.of(x.get(1)), x.facts()), "fencing token")) {
            throw new LockLostException(g.name, "the lock's item is gone or another holder's (its lease ran out,"
                    + " it was evicted or broken); no fencing token was issued", null);
        }
        keepWhileAhead(g.node, g.keys, token, x.facts());
        hints.fenced(g.name, true); // its holders use fencing: issue with the acquisition from now on
        return token;
    }


    private static long tokenOf(MetaReply fence) {
        if (!fence.is("VA")) {
            return -1;
        }
        try {
            return Long.parseLong(fence.text().trim());
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Touches the item, then compares its CAS with ours. Touch first: memcached has no
     * compare-and-touch, and a compare-and-set ({@code ms C<cas>}) stores a new copy, which a full
     * cache refuses by dropping the item. When the lock was already lost and another process holds
     * it, the touch gives that holder's item our lease: that can only delay its expiry, should that
     * holder die, by at most one lease; it never lets two hold the lock.
     */
    @Override
    public boolean renew(Grant grant, Duration lease) {
        MemcachedGrant g = (MemcachedGrant) grant;
        if (g.isReleased()) {
            return false;
        }
        MemcachedNode.Exchange x = g.node.call(facts -> facts.sameIncarnation(g.facts)
                ? List.of(MetaRequest.of("mg " + g.keys.lock() + " T" + ttlSeconds(lease) + " c"))
                : List.of());
        return isOurs(g, x, "renew");
    }

    @Override
    public boolean verify(Grant grant) {
        MemcachedGrant g = (MemcachedGrant) grant;
        if (g.isReleased()) {
            return false;
        }
        MemcachedNode.Exchange x = g.node.call(facts -> facts.sameIncarnation(g.facts)
                ? List.of(MetaRequest.of("mg " + g.keys.lock() + " c"))
                : List.of());
        return isOurs(g, x, "verify");
    }

    /** An empty exchange means the server restarted: its items, ours too, are gone. */
    private static boolean isOurs(MemcachedGrant g, MemcachedNode.Exchange x, String step) {
        if (x.replies().isEmpty()) {
            return false;
        }
        MetaReply r = x.get(0);
        if (r.is("HD")) {
            return r.number('c').orElse(-1) == g.cas;
        }
        if (r.is("EN")) {
            return false;
        }
        throw g.node.unexpected(r, "mg " + g.keys.lock() + " (" + step + ")");
    }

    @Override
    public void release(Grant grant) {
        MemcachedGrant g = (MemcachedGrant) grant;
        boolean unusedEagerToken;
        g.stateLock().lock();
        try {
            if (g.isReleased()) {
                return;
            }
            g.markReleased();
            unusedEagerToken = g.issuedEagerly() && !g.tokenAsked();
        } finally {
            g.stateLock().unlock();
        }
        if (unusedEagerToken) {
            hints.fenced(g.name, false); // this holder did not use it: back to tokens on demand
        }
        try {
            MemcachedNode.Exchange x = g.node.call(facts -> facts.sameIncarnation(g.facts)
                    ? List.of(MetaRequest.of("md " + g.keys.lock() + " C" + g.cas))
                    : List.of());
            if (!x.replies().isEmpty() && x.get(0).isError()) {
                LOG.warn("memcached at {} refused to release a lock ({}); it is freed when its lease runs out",
                        g.node, x.get(0));
            }
        } catch (dev.kanuki.LockBackendException e) {
            LOG.warn("cannot release a memcached lock ({}); it is freed when its lease runs out", e.getMessage());
        }
    }

    /**
     * An attempt that failed after sending its add (a deadline passed, the connection broke) may
     * have stored our record: the engine gave up on the request, so free the item now, if it is
     * ours, rather than at the end of its lease. In the background: the server was just failing,
     * and this must not hold up the caller's exception.
     */
    @Override
    public void abandon(LockRequest request) {
        if (!uncertain.remove(request)) {
            return;
        }
        MemcachedKeys keys = keysOf(request.name());
        byte[] value = OwnerRecord.encode(request.owner(), request.name());
        MemcachedNode node = nodeFor(keys);
        try {
            cleanup.execute(() -> {
                try {
                    MetaReply r = node.call(f -> List.of(MetaRequest.of("mg " + keys.lock() + " v c"))).get(0);
                    if (r.is("VA") && Arrays.equals(r.value(), value) && r.number('c').isPresent()) {
                        node.call(f -> List.of(MetaRequest.of("md " + keys.lock() + " C" + r.number('c').getAsLong())));
                    }
                } catch (RuntimeException e) {
                    LOG.debug("could not check for a lock item left by a failed attempt; it expires with its lease", e);
                }
            });
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // closed: the item expires with its lease
        }
    }

    /**
     * Refuses, saying why nothing stays: a lock's item expires with its lease, a name's fencing
     * counter {@link #fenceKeepSeconds} after its last increment (later while it runs ahead of the
     * clock).
     */
    @Override
    public List<String> prune(boolean dryRun) {
        throw new UnsupportedOperationException("memcached: nothing to prune: a lock's item expires with its lease, "
                + "and a name's fencing counter " + fenceKeepSeconds + " s after its last token (fenceMargin plus "
                + CLOCK_WINDOW_SECONDS + " s of clock window)");
    }

    @Override
    public LockStatus status(String name) {
        MemcachedKeys keys = keysOf(name);
        MemcachedNode.Exchange x = nodeFor(keys).call(facts -> List.of(
                MetaRequest.of("mg " + keys.lock() + " v t"), MetaRequest.of("mg " + keys.fence() + " v")));
        return statusOf(name, x.get(0), x.get(1));
    }

    private static LockStatus statusOf(String name, MetaReply lock, MetaReply fence) {
        long token = tokenOf(fence);
        if (!lock.is("VA")) {
            return new LockStatus(name, LockStatus.State.FREE, Optional.empty(), token);
        }
        long ttl = lock.number('t').orElse(-1);
        Instant until = ttl >= 0 ? Instant.now().plusSeconds(ttl) : null;
        OwnerInfo owner = OwnerRecord.owner(lock.value(), until);
        return new LockStatus(name, LockStatus.State.HELD, Optional.ofNullable(owner), token);
    }

    /**
     * Every lock item on every server, found with {@code lru_crawler metadump hash} (which walks
     * the whole cache: for {@code kanuki status}, not for hot paths), then read in batches.
     */
    @Override
    public List<LockStatus> list() {
        List<LockStatus> out = new ArrayList<>();
        for (MemcachedNode node : nodes) {
            long deadline = System.nanoTime() + timeout.multipliedBy(10).toNanos();
            List<MemcachedKeys> found = node.keysStartingWith(MemcachedKeys.LOCK_PREFIX, deadline).stream()
                    .map(MemcachedKeys::ofLockKey).filter(k -> k != null).toList();
            for (int from = 0; from < found.size(); from += LIST_BATCH) {
                List<MemcachedKeys> batch = found.subList(from, Math.min(found.size(), from + LIST_BATCH));
                MemcachedNode.Exchange x = node.call(facts -> {
                    List<MetaRequest> requests = new ArrayList<>();
                    for (MemcachedKeys k : batch) {
                        requests.add(MetaRequest.of("mg " + k.lock() + " v t"));
                        requests.add(MetaRequest.of("mg " + k.fence() + " v"));
                    }
                    return requests;
                });
                for (int i = 0; i < batch.size(); i++) {
                    MetaReply lock = x.get(2 * i);
                    String name = lock.is("VA") ? OwnerRecord.name(lock.value()) : null;
                    if (name != null && MemcachedKeys.of(name).equals(batch.get(i))) {
                        out.add(statusOf(name, lock, x.get(2 * i + 1)));
                    }
                }
            }
        }
        return out;
    }

    @Override
    public LockStatus breakLock(String name, boolean force) {
        LockStatus before = status(name);
        if (before.state() == LockStatus.State.FREE) {
            return before;
        }
        if (!force) {
            throw new IllegalStateException("lock '" + dev.kanuki.spi.SafeNames.printable(name) + "' is held by "
                    + before.owner().map(OwnerInfo::describe).orElse("an unknown owner")
                    + " whose lease is running; it is freed when the lease runs out, or break it with force");
        }
        MemcachedKeys keys = keysOf(name);
        nodeFor(keys).call(facts -> List.of(MetaRequest.of("md " + keys.lock())));
        return before;
    }

    @Override
    public void close() {
        cleanup.shutdown();
        nodes.forEach(MemcachedNode::close);
    }

    /**
     * One acquisition: where, the server process that granted it, the item's CAS, the token. A
     * grant taken without the token issues it on the first {@link #fencingToken()}, under the
     * grant's state lock, which release also takes: a token is never issued once the release began.
     */
    private final class MemcachedGrant extends TokenOnDemandGrant {
        final MemcachedNode node;
        final MemcachedKeys keys;
        final String name;
        final ServerFacts facts;
        final long cas;

        MemcachedGrant(MemcachedNode node, MemcachedKeys keys, String name, ServerFacts facts, long cas,
                boolean issuedEagerly, long token) {
            super(issuedEagerly ? OptionalLong.of(token) : OptionalLong.empty());
            this.node = node;
            this.keys = keys;
            this.name = name;
            this.facts = facts;
            this.cas = cas;
        }

        @Override
        protected long issueToken() {
            return MemcachedLockBackend.this.issueToken(this);
        }

        @Override
        protected String lockName() {
            return name;
        }

        @Override
        protected String storeName() {
            return "memcached";
        }
    }
}
