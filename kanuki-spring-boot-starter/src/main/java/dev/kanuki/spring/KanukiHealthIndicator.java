package dev.kanuki.spring;

import org.springframework.boot.actuate.health.Health;
import org.springframework.boot.actuate.health.HealthIndicator;

/** The lock store's health for Spring Boot 3.5's actuator (see {@link KanukiHealthAutoConfiguration}). */
final class KanukiHealthIndicator implements HealthIndicator {
    private final LockStoreProbe probe;

    KanukiHealthIndicator(LockStoreProbe probe) {
        this.probe = probe;
    }

    @Override
    public Health health() {
        LockStoreProbe.Result result = probe.check();
        return (result.up() ? Health.up() : Health.down()).withDetails(result.details()).build();
    }
}
