package dev.kanuki.spring;

import dev.kanuki.LockProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A health indicator {@code kanuki} for the lock store (UP when it answers a status call within
 * {@code kanuki.health.timeout}, else DOWN with the error), when Spring Boot's health support is on
 * the class path; off with {@code management.health.kanuki.enabled=false}. Spring Boot 3.5 and 4.0
 * name the health types differently: one small class for each, chosen by which is present.
 */
@AutoConfiguration(after = KanukiAutoConfiguration.class)
@ConditionalOnBean(LockProvider.class)
@ConditionalOnProperty(prefix = "management.health.kanuki", name = "enabled", havingValue = "true", matchIfMissing = true)
public class KanukiHealthAutoConfiguration {

    /** Made by Spring. */
    public KanukiHealthAutoConfiguration() {
    }

    // The two classes below and their beans' types are not public: the API documentation then
    // needs neither Boot's health types (and Boot 3.5's, annotated for Jackson, would need Jackson).

    /** Spring Boot 3.5: {@code org.springframework.boot.actuate.health}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.actuate.health.HealthIndicator")
    static class Boot3 {

        /** Made by Spring. */
        Boot3() {
        }

        /**
         * The indicator.
         *
         * @param provider the application's lock provider
         * @param properties the {@code kanuki.*} properties
         * @return the indicator
         */
        @Bean
        @ConditionalOnMissingBean(name = "kanukiHealthIndicator")
        KanukiHealthIndicator kanukiHealthIndicator(LockProvider provider, KanukiProperties properties) {
            return new KanukiHealthIndicator(new LockStoreProbe(provider, properties.getHealth().getTimeout()));
        }
    }

    /** Spring Boot 4.0: {@code org.springframework.boot.health.contributor}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.boot.health.contributor.HealthIndicator")
    @ConditionalOnMissingClass("org.springframework.boot.actuate.health.HealthIndicator")
    static class Boot4 {

        /** Made by Spring. */
        Boot4() {
        }

        /**
         * The indicator.
         *
         * @param provider the application's lock provider
         * @param properties the {@code kanuki.*} properties
         * @return the indicator
         */
        @Bean
        @ConditionalOnMissingBean(name = "kanukiHealthIndicator")
        KanukiBoot4HealthIndicator kanukiHealthIndicator(LockProvider provider, KanukiProperties properties) {
            return new KanukiBoot4HealthIndicator(new LockStoreProbe(provider, properties.getHealth().getTimeout()));
        }
    }
}
