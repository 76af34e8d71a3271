package dev.kanuki.spring;

import dev.kanuki.LockProvider;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.aop.config.AopConfigUtils;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.context.annotation.ImportBeanDefinitionRegistrar;
import org.springframework.context.annotation.Role;
import org.springframework.core.env.Environment;
import org.springframework.core.type.AnnotationMetadata;

/**
 * Auto-configuration of kanuki: the {@link LockProvider} bean from the {@code kanuki.*}
 * properties (unless the application defines its own), closed with the context, and the advisor
 * of {@link Locked @Locked} methods ({@code kanuki.locked.enabled}, default true).
 */
@AutoConfiguration
@EnableConfigurationProperties(KanukiProperties.class)
public class KanukiAutoConfiguration {
    private static final Logger log = LoggerFactory.getLogger(KanukiAutoConfiguration.class);

    /** Made by Spring. */
    public KanukiAutoConfiguration() {
    }

    /**
     * The application's lock provider: {@code kanuki.uri} with the typed options; closed (every
     * lock it holds released) when the context closes.
     *
     * @param properties the {@code kanuki.*} properties
     * @return the open provider
     */
    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public LockProvider kanukiLockProvider(KanukiProperties properties) {
        String uri = properties.effectiveUri();
        LockProvider provider = LockProvider.open(uri);
        log.info("kanuki: locks in {}", provider.uri());
        return provider;
    }

    /**
     * The application's {@link LeaderTask} beans, each in its election while the context runs.
     *
     * @param provider the application's lock provider
     * @param tasks the leader tasks
     * @param environment for {@code kanuki.locked.prefix}
     * @return the runner
     */
    @Bean
    @ConditionalOnBean(LeaderTask.class)
    @ConditionalOnMissingBean
    public LeaderTasks kanukiLeaderTasks(LockProvider provider, List<LeaderTask> tasks, Environment environment) {
        return new LeaderTasks(provider, tasks, () -> LockedConfiguration.prefix(environment));
    }

    /** {@link Locked @Locked}: the advisor, a check of the annotated methods at start-up, and an auto-proxy creator. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnProperty(prefix = "kanuki.locked", name = "enabled", havingValue = "true", matchIfMissing = true)
    @Import(LockedConfiguration.ProxyCreatorRegistrar.class)
    public static class LockedConfiguration {

        /** Made by Spring. */
        public LockedConfiguration() {
        }

        /**
         * The advisor. Static and infrastructure, as Spring's own advisors: it is made before other
         * beans, and looks the provider and the prefix up at the first call only, so that they are
         * still processed by every bean post-processor.
         *
         * @param environment for {@code kanuki.locked.order}, {@code kanuki.locked.prefix} and placeholders
         * @param providers the {@link LockProvider} bean
         * @param beanFactory for {@code @bean} references in name templates
         * @return the advisor
         */
        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        public static LockedAdvisor kanukiLockedAdvisor(Environment environment, ObjectProvider<LockProvider> providers,
                                                        ConfigurableListableBeanFactory beanFactory) {
            int order = Binder.get(environment).bind("kanuki.locked.order", Integer.class).orElse(LockedAdvisor.DEFAULT_ORDER);
            LockedInterceptor interceptor = new LockedInterceptor(providers::getObject, () -> prefix(environment),
                    environment::resolveRequiredPlaceholders, beanFactory);
            return new LockedAdvisor(interceptor, order);
        }

        /**
         * Checks every {@code @Locked} method at start-up.
         *
         * @param beanFactory the application's beans
         * @param advisor the advisor
         * @return the check
         */
        @Bean
        @Role(BeanDefinition.ROLE_INFRASTRUCTURE)
        static LockedMethodsCheck kanukiLockedMethodsCheck(ConfigurableListableBeanFactory beanFactory,
                                                           LockedAdvisor advisor) {
            return new LockedMethodsCheck(beanFactory, advisor);
        }

        static String prefix(Environment environment) {
            String prefix = environment.getProperty("kanuki.locked.prefix");
            if (prefix != null) {
                return prefix;
            }
            String application = environment.getProperty("spring.application.name");
            return application == null || application.isBlank() ? "" : application + "/";
        }

        /**
         * Registers Spring's infrastructure auto-proxy creator when no other is (Spring Boot's
         * AOP auto-configuration off), as {@code @EnableTransactionManagement} does: without one no
         * advisor applies.
         */
        static class ProxyCreatorRegistrar implements ImportBeanDefinitionRegistrar {
            @Override
            public void registerBeanDefinitions(AnnotationMetadata metadata, BeanDefinitionRegistry registry) {
                AopConfigUtils.registerAutoProxyCreatorIfNecessary(registry);
            }
        }
    }
}
