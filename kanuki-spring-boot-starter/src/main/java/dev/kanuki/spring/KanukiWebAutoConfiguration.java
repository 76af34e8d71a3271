package dev.kanuki.spring;

import dev.kanuki.LockProvider;
import dev.kanuki.servlet.LockingFilter;
import dev.kanuki.servlet.RequestKey;
import java.util.List;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * kanuki in a servlet web application: Spring MVC answers a {@link LockBusyException} with
 * {@code 409 Conflict} (when spring-webmvc is present), and {@code kanuki.web.url-patterns}
 * registers kanuki-servlet's {@link LockingFilter} (when kanuki-servlet is present). Uses only
 * classes that Spring Boot 3.5 and 4.0 both have in the same place.
 */
@AutoConfiguration(after = KanukiAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
public class KanukiWebAutoConfiguration {

    /** Made by Spring. */
    public KanukiWebAutoConfiguration() {
    }

    /** {@link LockBusyException} → 409 in Spring MVC. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "org.springframework.web.servlet.HandlerExceptionResolver")
    public static class MvcConfiguration {

        /** Made by Spring. */
        public MvcConfiguration() {
        }

        /**
         * The resolver of {@link LockBusyException}.
         *
         * @param properties the {@code kanuki.*} properties
         * @return the resolver
         */
        @Bean
        @ConditionalOnMissingBean
        public LockBusyExceptionResolver kanukiLockBusyExceptionResolver(KanukiProperties properties) {
            return new LockBusyExceptionResolver(properties.getWeb().getRetryAfter());
        }
    }

    /** kanuki-servlet's filter, from {@code kanuki.web.*}. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"dev.kanuki.servlet.LockingFilter", "org.springframework.boot.web.servlet.FilterRegistrationBean"})
    @Conditional(FilterConfiguration.UrlPatternsSet.class)
    public static class FilterConfiguration {

        /** Made by Spring. */
        public FilterConfiguration() {
        }

        /**
         * The filter on {@code kanuki.web.url-patterns}, locking the application's provider.
         *
         * @param provider the application's lock provider
         * @param properties the {@code kanuki.*} properties
         * @return the filter's registration
         * @throws IllegalStateException when {@code kanuki.web.key} is missing or wrong
         */
        @Bean
        @ConditionalOnMissingBean(name = "kanukiLockingFilter")
        public FilterRegistrationBean<LockingFilter> kanukiLockingFilter(LockProvider provider, KanukiProperties properties) {
            KanukiProperties.WebProperties web = properties.getWeb();
            if (web.getKey() == null || web.getKey().isBlank()) {
                throw new IllegalStateException("kanuki.web.url-patterns is set but kanuki.web.key is not: set it to session,"
                        + " user, param:NAME, header:NAME, path:REGEX or class:NAME");
            }
            RequestKey key;
            try {
                key = RequestKey.parse(web.getKey());
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException("kanuki.web.key = " + web.getKey() + ": " + e.getMessage(), e);
            }
            LockingFilter.Builder builder = LockingFilter.builder(provider)
                    .key(key)
                    .waitUpTo(web.getWait())
                    .timeoutStatus(web.getTimeoutStatus())
                    .retryAfter(web.getRetryAfter())
                    .rejectWithoutKey(web.isRejectWithoutKey());
            if (web.getPrefix() != null) {
                builder.prefix(web.getPrefix());
            }
            FilterRegistrationBean<LockingFilter> registration = new FilterRegistrationBean<>(builder.build());
            registration.setName("kanukiLockingFilter");
            registration.setUrlPatterns(web.getUrlPatterns());
            registration.setAsyncSupported(true);
            registration.setOrder(web.getFilterOrder());
            return registration;
        }

        /** True when {@code kanuki.web.url-patterns} has at least one pattern (a list or a comma-separated value). */
        static class UrlPatternsSet extends SpringBootCondition {
            @Override
            public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
                List<String> patterns = Binder.get(context.getEnvironment())
                        .bind("kanuki.web.url-patterns", Bindable.listOf(String.class)).orElse(List.of());
                return patterns.isEmpty() ? ConditionOutcome.noMatch("kanuki.web.url-patterns is not set")
                        : ConditionOutcome.match("kanuki.web.url-patterns " + patterns);
            }
        }
    }
}
