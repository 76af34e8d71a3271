package dev.kanuki.cli;

import dev.kanuki.Capabilities;
import dev.kanuki.LeaseKind;
import dev.kanuki.LockStatus;
import dev.kanuki.OwnerInfo;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockBackendFactory;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.LockUri;
import java.time.Instant;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test-only {@code scripted:} backend whose {@code breakLock} and {@code status} answers are
 * scripted by lock name, to drive {@code kanuki break} through outcomes that real processes only
 * reach by chance:
 * <ul>
 *   <li>{@code racing}: another breaker is at work; the first two breaks fail with "changed hands"
 *       (status stale, then free), the third finds nothing to break;
 *   <li>{@code live}: every break fails because the lock is live (status held);
 *   <li>{@code expired}: a stale lock of another host whose lease ran out 12 seconds ago;
 *   <li>{@code planted}: an entry the backend cannot read as a lock and leaves alone (unknown).
 * </ul>
 */
public final class ScriptedBackendFactory implements LockBackendFactory {
    static final AtomicInteger RACING_BREAKS = new AtomicInteger();
    static final AtomicInteger LIVE_BREAKS = new AtomicInteger();
    private static final OwnerInfo OWNER = new OwnerInfo("elsewhere", 4242, "0".repeat(32), Instant.EPOCH,
            Instant.now().plusSeconds(600));

    /** Used by {@link java.util.ServiceLoader}. */
    public ScriptedBackendFactory() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("scripted");
    }

    @Override
    public LockBackend create(LockUri uri) {
        return new LockBackend() {
            @Override
            public Capabilities capabilities() {
                return Capabilities.builder(LeaseKind.TTL).crossProcess().ownerRecords().build();
            }

            @Override
            public String scope() {
                return "scripted:";
            }

            @Override
            public Optional<Grant> tryAcquire(LockRequest request) {
                throw new UnsupportedOperationException("scripted: takes no locks");
            }

            @Override
            public void release(Grant grant) {
            }

            @Override
            public boolean verify(Grant grant) {
                return false;
            }

            @Override
            public LockStatus status(String name) {
                if (name.equals("planted")) {
                    return new LockStatus(name, LockStatus.State.UNKNOWN, Optional.empty(), -1);
                }
                if (name.equals("live")) {
                    return new LockStatus(name, LockStatus.State.HELD, Optional.of(OWNER), 7);
                }
                if (name.equals("racing") && RACING_BREAKS.get() < 2) {
                    return new LockStatus(name, LockStatus.State.STALE, Optional.of(OWNER), 7);
                }
                return new LockStatus(name, LockStatus.State.FREE, Optional.empty(), 7);
            }

            @Override
            public LockStatus breakLock(String name, boolean force) {
                if (name.equals("live")) {
                    LIVE_BREAKS.incrementAndGet();
                    throw new IllegalStateException("lock 'live' is live (" + OWNER.describe() + "); use --force");
                }
                if (name.equals("expired")) {
                    OwnerInfo gone = new OwnerInfo("elsewhere", 4242, "1".repeat(32), Instant.now().minusSeconds(60),
                            Instant.now().minusSeconds(12));
                    return new LockStatus(name, LockStatus.State.STALE, Optional.of(gone), 9);
                }
                if (name.equals("racing") && RACING_BREAKS.incrementAndGet() <= 2) {
                    throw new IllegalStateException("lock 'racing' changed hands while breaking it, or another "
                            + "breaker is at work; look again");
                }
                return status(name);
            }

            @Override
            public void close() {
            }
        };
    }
}
