package dev.kanuki.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Flow;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** The auto-configuration's conditions and the start-up checks of @Locked methods, without a web server. */
class KanukiAutoConfigurationTest {
    @TempDir
    Path dir;

    private ApplicationContextRunner runner() {
        return new ApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(KanukiAutoConfiguration.class, KanukiWebAutoConfiguration.class))
                .withPropertyValues("kanuki.uri=file:" + dir);
    }

    @Test
    void providerFromTypedPropertiesIsClosedWithTheContext() {
        LockProvider[] seen = new LockProvider[1];
        runner().withPropertyValues("kanuki.lease=2s", "kanuki.wait-threads=4", "kanuki.options.strategy=mkdir")
                .run(context -> {
                    LockProvider provider = context.getBean(LockProvider.class);
                    seen[0] = provider;
                    assertThat(provider.uri()).contains("strategy=mkdir").contains("lease=2000ms").contains("waitThreads=4");
                    try (LockHandle h = provider.lock("a").acquire(java.time.Duration.ofSeconds(30))) {
                        assertThat(h.isHeld()).isTrue();
                    }
                    assertThat(context).hasSingleBean(LockedAdvisor.class);
                    // not a web application: no MVC resolver, no filter
                    assertThat(context).doesNotHaveBean(LockBusyExceptionResolver.class);
                });
        assertThrows(IllegalStateException.class, () -> seen[0].lock("a").tryAcquire(), "closed with the context");
    }

    @Test
    void defaultUriIsTheCommandLinesPerUserFileDirectory() {
        assertThat(new KanukiProperties().effectiveUri()).isEqualTo(LockProvider.DEFAULT_URI).isEqualTo("file:");
    }

    @Test
    void anOptionGivenTwiceIsRefused() {
        runner().withPropertyValues("kanuki.uri=file:" + dir + "?lease=5s", "kanuki.lease=2s").run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("'lease' is set twice");
        });
    }

    @Test
    void usersOwnProviderWins() {
        runner().withUserConfiguration(OwnProvider.class).run(context -> {
            assertThat(context).hasSingleBean(LockProvider.class);
            assertThat(context.getBean(LockProvider.class).uri()).startsWith("mem:");
        });
    }

    @Test
    void lockedCanBeTurnedOff() {
        runner().withPropertyValues("kanuki.locked.enabled=false").run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(LockedAdvisor.class);
        });
    }

    @Test
    void theMetadataForIdesIsGenerated() throws Exception {
        try (InputStream in = getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
            assertThat(in).isNotNull();
            String json = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            assertThat(json).contains("\"kanuki.uri\"", "\"kanuki.lease\"", "\"kanuki.wait-threads\"",
                    "\"kanuki.locked.prefix\"", "\"kanuki.locked.order\"", "\"kanuki.web.url-patterns\"");
        }
    }

    @Test
    void reactiveAndAsynchronousReturnTypesAreRefusedAtStartUp() {
        for (Class<?> bean : List.of(MonoJob.class, FluxJob.class, FlowJob.class, FutureJob.class)) {
            runner().withBean(bean).run(context -> {
                assertThat(context).as(bean.getSimpleName()).hasFailed();
                assertThat(context.getStartupFailure()).rootCause()
                        .hasMessageContaining("@Locked on " + bean.getName())
                        .hasMessageContaining("the lock would already be released")
                        .hasMessageContaining("acquireAsync");
            });
        }
    }

    @Test
    void wrongTemplatesAndDurationsAreRefusedAtStartUp() {
        runner().withBean(BadTemplate.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasMessageContaining("cannot read the name template 'x-#{#a.'");
        });
        runner().withBean(BadDuration.class).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context.getStartupFailure()).hasMessageContaining("cannot read waitUpTo = \"soon\"");
        });
    }

    @Configuration(proxyBeanMethods = false)
    static class OwnProvider {
        @Bean(destroyMethod = "close")
        LockProvider myLocks() {
            return LockProvider.open("mem:own");
        }
    }

    static class MonoJob {
        @Locked("m")
        public Mono<String> run() {
            return Mono.just("x");
        }
    }

    static class FluxJob {
        @Locked("f")
        public Flux<String> run() {
            return Flux.just("x");
        }
    }

    static class FlowJob {
        @Locked("p")
        public Flow.Publisher<String> run() {
            return null;
        }
    }

    static class FutureJob {
        @Locked("c")
        public CompletableFuture<String> run() {
            return CompletableFuture.completedFuture("x");
        }
    }

    static class BadTemplate {
        @Locked("x-#{#a.")
        public Optional<String> run(String a) {
            return Optional.of(a);
        }
    }

    static class BadDuration {
        @Locked(value = "d", waitUpTo = "soon")
        public void run() {
        }
    }
}
