package dev.kanuki.faults;

import dev.kanuki.LeaseKind;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * One backend under test: its name in the table, how to get its URI (starting its server), and
 * what kind of lease it has, which decides what its documented behaviour under each fault is.
 * A new backend joins the suite with one line in {@link FaultSuiteTest#targets}.
 *
 * @param name the row's name, e.g. {@code file:mkdir}
 * @param uri makes the URI (the test kit starts a server the first time)
 * @param kind TTL: a paused holder loses the lock after its lease; SESSION: it keeps it (a killed holder
 *     must be replaced within {@link #recoveryBound()})
 */
record Target(String name, Supplier<String> uri, LeaseKind kind) {
    /** The lease every ttl target runs with: short, so that the suite spans several. */
    static final Duration LEASE = Duration.ofSeconds(3);

    /** @return the bound within which a killed holder's lock must be free again */
    Duration recoveryBound() {
        return kind == LeaseKind.TTL ? LEASE.plusSeconds(5) : Duration.ofSeconds(5); // generous: CI machines are loaded
    }
}
