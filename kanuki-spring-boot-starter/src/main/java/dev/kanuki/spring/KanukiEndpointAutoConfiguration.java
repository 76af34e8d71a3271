package dev.kanuki.spring;

import dev.kanuki.LockProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The actuator endpoint {@code locks}, when the actuator is on the class path and the endpoint is
 * available (enabled and exposed, e.g. {@code management.endpoints.web.exposure.include=health,locks}):
 * only then is a listener registered on the provider, so an application that does not expose it
 * pays nothing per lock. The endpoint's annotations are in the same place in Spring Boot 3.5 and 4.0.
 */
@AutoConfiguration(after = KanukiAutoConfiguration.class)
@ConditionalOnClass(name = {"org.springframework.boot.actuate.endpoint.annotation.Endpoint",
        "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint"})
@ConditionalOnBean(LockProvider.class)
public class KanukiEndpointAutoConfiguration {

    /** Made by Spring. */
    public KanukiEndpointAutoConfiguration() {
    }

    /** The endpoint, when available. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnAvailableEndpoint(LocksEndpoint.class)
    public static class EndpointConfiguration {

        /** Made by Spring. */
        public EndpointConfiguration() {
        }

        /**
         * The endpoint, with its record of the provider's acquisitions registered as a listener.
         *
         * @param provider the application's lock provider
         * @param properties the {@code kanuki.*} properties
         * @return the endpoint
         */
        @Bean
        @ConditionalOnMissingBean
        public LocksEndpoint kanukiLocksEndpoint(LockProvider provider, KanukiProperties properties) {
            LockActivity activity = new LockActivity();
            provider.addListener(activity);
            return new LocksEndpoint(provider, activity, properties.getLease());
        }
    }
}
