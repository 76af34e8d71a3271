package dev.kanuki.spring;

import dev.kanuki.LockProvider;
import dev.kanuki.micrometer.LockMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.observation.ObservationRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;

/**
 * Lock metrics: when kanuki-micrometer and Micrometer are on the class path, the application's
 * {@code MeterRegistry} (and {@code ObservationRegistry}, for one observation per wait and per
 * hold) records the {@link LockProvider} bean's locks ({@code kanuki.lock.*} meters, see
 * {@link LockMetrics}). The registries are looked up once the context has made its singletons, so
 * this works whichever auto-configuration (Boot 3.5's or 4.0's actuator) makes them.
 */
@AutoConfiguration(after = KanukiAutoConfiguration.class)
@ConditionalOnClass(name = {"dev.kanuki.micrometer.LockMetrics", "io.micrometer.core.instrument.MeterRegistry"})
@ConditionalOnProperty(prefix = "kanuki.metrics", name = "enabled", havingValue = "true", matchIfMissing = true)
public class KanukiMetricsAutoConfiguration {

    /** Made by Spring. */
    public KanukiMetricsAutoConfiguration() {
    }

    /**
     * Binds {@link LockMetrics} to the provider when the context has a {@code MeterRegistry}.
     *
     * @param provider the application's lock provider
     * @param meters the meter registry, if any
     * @param observations the observation registry, if any
     * @param properties the {@code kanuki.*} properties
     * @return the binder
     */
    @Bean
    @ConditionalOnBean(LockProvider.class)
    @ConditionalOnMissingBean
    public LockMetricsBinder kanukiLockMetricsBinder(LockProvider provider, ObjectProvider<MeterRegistry> meters,
                                                     ObjectProvider<ObservationRegistry> observations,
                                                     KanukiProperties properties) {
        return new LockMetricsBinder(provider, meters, observations, properties.getMetrics());
    }

    /** Binds {@link LockMetrics} to the provider after the singletons are made, unbinds it at close. */
    public static final class LockMetricsBinder implements SmartInitializingSingleton, DisposableBean {
        private static final Logger log = LoggerFactory.getLogger(LockMetricsBinder.class);
        private final LockProvider provider;
        private final ObjectProvider<MeterRegistry> meters;
        private final ObjectProvider<ObservationRegistry> observations;
        private final KanukiProperties.MetricsProperties settings;
        private volatile LockMetrics metrics;

        LockMetricsBinder(LockProvider provider, ObjectProvider<MeterRegistry> meters,
                          ObjectProvider<ObservationRegistry> observations, KanukiProperties.MetricsProperties settings) {
            this.provider = provider;
            this.meters = meters;
            this.observations = observations;
            this.settings = settings;
        }

        @Override
        public void afterSingletonsInstantiated() {
            MeterRegistry registry = meters.getIfUnique();
            ObservationRegistry observationRegistry = settings.isObservations() ? observations.getIfUnique() : null;
            if (registry == null && observationRegistry == null) {
                log.debug("kanuki: no MeterRegistry or ObservationRegistry in the context; no lock metrics");
                return;
            }
            LockMetrics.Builder builder = LockMetrics.builder().lockNamesAsTags(settings.isLockNamesAsTags());
            if (registry != null) {
                builder.meterRegistry(registry);
            }
            if (observationRegistry != null) {
                builder.observationRegistry(observationRegistry);
            }
            metrics = builder.build().bindTo(provider);
        }

        /** {@return the bound metrics, once bound} */
        public java.util.Optional<LockMetrics> metrics() {
            return java.util.Optional.ofNullable(metrics);
        }

        @Override
        public void destroy() {
            LockMetrics bound = metrics;
            if (bound != null) {
                bound.unbindFrom(provider);
            }
        }
    }
}
