package dev.kanuki;

import dev.kanuki.spi.Durations;
import dev.kanuki.spi.SafeNames;
import java.time.Duration;
import java.time.Instant;
import java.util.Objects;
import java.util.Optional;

/**
 * Who holds (or last held) a lock, as recorded by backends that store an owner record.
 *
 * @param host the host name of the holder
 * @param pid the process id of the holder
 * @param id a random 128-bit id (32 hex digits) unique to the acquisition, or to the holder's
 *     connection on database servers
 * @param acquiredAt when the lock was obtained; {@code null} where the backend records who holds
 *     a lock but not since when (database servers record the holding connection once, not
 *     every acquisition)
 * @param leaseUntil when the lease runs out unless renewed; {@code null} for session leases,
 *     which last as long as the holder's process or connection
 */
public record OwnerInfo(String host, long pid, String id, Instant acquiredAt, Instant leaseUntil) {

    /**
     * Checks that the required fields are present and that the host name is printable (owner
     * records are read from places others can write; a host name must not smuggle terminal
     * escapes into messages).
     *
     * @param host the host name of the holder
     * @param pid the process id of the holder
     * @param id a random 128-bit id unique to the acquisition, or to the holder's connection
     * @param acquiredAt when the lock was obtained, or {@code null} when the backend does not record it
     * @param leaseUntil when the lease runs out unless renewed, or {@code null} for session leases
     * @throws NullPointerException when {@code host} or {@code id} is null
     * @throws IllegalArgumentException when the host name has control or format characters
     */
    public OwnerInfo {
        Objects.requireNonNull(host, "host");
        Objects.requireNonNull(id, "id");
        for (int i = 0; i < host.length(); i++) {
            if (!SafeNames.isPrintable(host.charAt(i))) {
                throw new IllegalArgumentException("host name '" + SafeNames.printable(host) + "' has control characters");
            }
        }
    }

    /** {@return the lease end, or empty for a session lease} */
    public Optional<Instant> lease() {
        return Optional.ofNullable(leaseUntil);
    }

    /**
     * {@return a one-line description for people, e.g. {@code pid 4242 on web-1 since 2026-11-21T10:00:00Z (3s ago)}}
     */
    public String describe() {
        if (acquiredAt == null) {
            return "pid " + pid + " on " + host;
        }
        Duration age = Duration.between(acquiredAt, Instant.now());
        String ageText = age.isNegative() ? "" : " (" + Durations.format(Duration.ofMillis(age.toMillis())) + " ago)";
        return "pid " + pid + " on " + host + " since " + acquiredAt + ageText;
    }
}
