package dev.kanuki.spring;

import dev.kanuki.LockProvider;
import dev.kanuki.spi.LockUri;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;

/**
 * The actuator endpoint {@code locks}: what this application holds and waits for on its lock
 * provider (from {@link LockActivity}), with each held lock's last fencing token as the store
 * tells it. Lock names appear here, never in metrics unless asked.
 */
@Endpoint(id = "locks")
public class LocksEndpoint {
    private final LockProvider provider;
    private final LockActivity activity;
    private final Duration lease;

    /**
     * Makes the endpoint.
     *
     * @param provider the application's lock provider
     * @param activity the record of its acquisitions
     * @param lease the configured lease ({@code kanuki.lease}), or null for the backend's default
     */
    public LocksEndpoint(LockProvider provider, LockActivity activity, Duration lease) {
        this.provider = provider;
        this.activity = activity;
        this.lease = lease;
    }

    /**
     * What the endpoint answers.
     *
     * @param store the lock store's URI, without secrets
     * @param leaseKind how the store keeps a held lock alive: {@code session} or {@code ttl}
     * @param lease the lease of a ttl store, as configured ({@code default} for the backend's own, 30s)
     * @param held the locks held now, oldest first
     * @param waiting the acquisitions waiting now, oldest first
     */
    public record Report(String store, String leaseKind, String lease, List<Held> held, List<Waiting> waiting) {
    }

    /**
     * A lock held by this application.
     *
     * @param name the lock's name
     * @param mode exclusive, shared or permit
     * @param since when it was granted
     * @param heldMs how long it has been held, in milliseconds
     * @param lastFencingToken the last fencing token the store issued for the name (this holder's,
     *     for an exclusive lock whose token was issued), or -1 when the store cannot tell
     * @param lost whether it was found lost while its handle is still open
     */
    public record Held(String name, String mode, Instant since, long heldMs, long lastFencingToken, boolean lost) {
    }

    /**
     * An acquisition of this application waiting for a lock.
     *
     * @param name the lock's name
     * @param mode exclusive, shared or permit
     * @param since when the wait started
     * @param waitingMs how long it has been waiting, in milliseconds
     */
    public record Waiting(String name, String mode, Instant since, long waitingMs) {
    }

    /** {@return what this application holds and waits for now} */
    @ReadOperation
    public Report locks() {
        Instant now = Instant.now();
        Map<String, Long> tokens = new HashMap<>();
        List<Held> held = new ArrayList<>();
        for (LockActivity.Entry e : activity.held()) {
            long token = tokens.computeIfAbsent(e.name(), this::lastToken);
            held.add(new Held(e.name(), mode(e), e.since(), Duration.between(e.since(), now).toMillis(), token, e.lost()));
        }
        List<Waiting> waiting = new ArrayList<>();
        for (LockActivity.Entry e : activity.waiting()) {
            waiting.add(new Waiting(e.name(), mode(e), e.since(), Duration.between(e.since(), now).toMillis()));
        }
        String store;
        try {
            store = LockUri.parse(provider.uri()).redacted();
        } catch (RuntimeException e) {
            store = "(unreadable URI)";
        }
        String leaseKind = provider.capabilities().leaseKind().name().toLowerCase(Locale.ROOT);
        return new Report(store, leaseKind, lease == null ? "default" : lease.toMillis() + "ms", held, waiting);
    }

    private long lastToken(String name) {
        try {
            return provider.status(name).lastFencingToken();
        } catch (RuntimeException e) {
            return -1; // the endpoint still answers when the store does not
        }
    }

    private static String mode(LockActivity.Entry e) {
        return e.mode().name().toLowerCase(Locale.ROOT);
    }
}
