package dev.kanuki.spring;

import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;

/** The lock store's health for Spring Boot 4.0's health support (see {@link KanukiHealthAutoConfiguration}). */
final class KanukiBoot4HealthIndicator implements HealthIndicator {
    private final LockStoreProbe probe;

    KanukiBoot4HealthIndicator(LockStoreProbe probe) {
        this.probe = probe;
    }

    @Override
    public Health health() {
        LockStoreProbe.Result result = probe.check();
        return (result.up() ? Health.up() : Health.down()).withDetails(result.details()).build();
    }
}
