package dev.kanuki.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.kanuki.LeaderCandidate;
import dev.kanuki.LeaderElection;
import dev.kanuki.Leadership;
import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
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
                .withConfiguration(AutoConfigurations.of(KanukiAutoConfiguration.class, KanukiWebAutoConfiguration.class,
                        KanukiMetricsAutoConfiguration.class, KanukiHealthAutoConfiguration.class,
                        KanukiEndpointAutoConfiguration.class))
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
                    try (LockHandle h = provider.lock("a").acquire(Duration.ofSeconds(30))) {
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

    @Test
    void lockMetricsAreRecordedWhenTheContextHasAMeterRegistry() {
        runner().withBean(SimpleMeterRegistry.class).run(context -> {
            LockProvider provider = context.getBean(LockProvider.class);
            provider.lock("metered").tryAcquire().ifPresent(LockHandle::close);
            Timer acquired = context.getBean(MeterRegistry.class).find("kanuki.lock.acquire")
                    .tag("outcome", "acquired").tag("scheme", "file").timer();
            assertThat(acquired).isNotNull();
            assertThat(acquired.count()).isEqualTo(1);
        });
        runner().withBean(SimpleMeterRegistry.class).withPropertyValues("kanuki.metrics.enabled=false").run(context -> {
            context.getBean(LockProvider.class).lock("metered").tryAcquire().ifPresent(LockHandle::close);
            assertThat(context.getBean(MeterRegistry.class).find("kanuki.lock.acquire").timer()).isNull();
        });
    }

    @Test
    void healthIsUpWhileTheStoreAnswersAndDownWithTheErrorWhenItCannot() throws Exception {
        // Spring Boot 3.5 and 4.0 name the health types differently; this test runs on both, so it reads them reflectively
        runner().withPropertyValues("kanuki.health.timeout=30s").run(context -> {
            Object indicator = context.getBean("kanukiHealthIndicator");
            assertThat(status(indicator)).isEqualTo("UP");
            context.getBean(LockProvider.class).close(); // a real failure: the provider no longer answers
            assertThat(status(indicator)).isEqualTo("DOWN");
            assertThat(details(indicator).get("error").toString()).contains("IllegalStateException");
        });
        runner().withPropertyValues("management.health.kanuki.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean("kanukiHealthIndicator"));
    }

    @Test
    void aLeaderTaskLeadsWhileTheContextRunsAndHandsOverWhenItStops() {
        List<String> events = new CopyOnWriteArrayList<>();
        List<Long> standbyEpochs = new CopyOnWriteArrayList<>();
        try (LockProvider other = LockProvider.open("file:" + dir)) {
            LeaderElection[] standby = new LeaderElection[1];
            runner().withPropertyValues("kanuki.locked.prefix=app/")
                    .withBean("nightly", LeaderTask.class, () -> new RecordingTask(events)).run(context -> {
                        await().atMost(Duration.ofSeconds(60)).until(() -> !events.isEmpty());
                        assertThat(events.get(0)).startsWith("elected app/nightly ");
                        standby[0] = LeaderElection.join(other, "app/nightly", new LeaderCandidate() {
                            @Override
                            public void elected(Leadership term) {
                                standbyEpochs.add(term.epoch());
                            }

                            @Override
                            public void revoked(Leadership term, Leadership.End why) {
                            }
                        });
                        assertThat(context.getBean(LeaderTasks.class).elections()).hasSize(1);
                    });
            try {
                await().atMost(Duration.ofSeconds(60)).until(() -> !standbyEpochs.isEmpty());
                assertThat(events).hasSize(2);
                assertThat(events.get(1)).isEqualTo("revoked RESIGNED");
                long epoch = Long.parseLong(events.get(0).substring(events.get(0).lastIndexOf(' ') + 1));
                assertThat(standbyEpochs.get(0)).as("the next leader's epoch").isGreaterThan(epoch);
            } finally {
                if (standby[0] != null) {
                    standby[0].close();
                }
            }
        }
    }

    @Test
    void theLocksEndpointListsWhatTheApplicationHoldsAndWaitsFor() {
        runner().withPropertyValues("management.endpoints.web.exposure.include=health,locks").run(context -> {
            LocksEndpoint endpoint = context.getBean(LocksEndpoint.class);
            LockProvider provider = context.getBean(LockProvider.class);
            try (LockHandle held = provider.lock("board a/ü").acquire(Duration.ofSeconds(30))) {
                CompletableFuture<LockHandle> waiter = provider.lock("board a/ü").acquireAsync(Duration.ofSeconds(60));
                LocksEndpoint.Report report = endpoint.locks();
                assertThat(report.store()).startsWith("file:");
                assertThat(report.held()).singleElement().satisfies(h -> {
                    assertThat(h.name()).isEqualTo("board a/ü");
                    assertThat(h.mode()).isEqualTo("exclusive");
                    assertThat(h.lastFencingToken()).isEqualTo(held.fencingToken());
                });
                assertThat(report.waiting()).singleElement().satisfies(w -> assertThat(w.name()).isEqualTo("board a/ü"));
                held.close();
                waiter.get(60, java.util.concurrent.TimeUnit.SECONDS).close();
            }
            assertThat(endpoint.locks().held()).isEmpty();
            assertThat(endpoint.locks().waiting()).isEmpty();
        });
        runner().run(context -> assertThat(context).as("not exposed: no endpoint, no listener").doesNotHaveBean(LocksEndpoint.class));
    }

    static final class RecordingTask implements LeaderTask {
        private final List<String> events;

        RecordingTask(List<String> events) {
            this.events = events;
        }

        @Override
        public String election() {
            return "nightly";
        }

        @Override
        public void elected(Leadership term) {
            events.add("elected " + term.election() + " " + term.epoch());
        }

        @Override
        public void revoked(Leadership term, Leadership.End why) {
            events.add("revoked " + why);
        }
    }

    private static String status(Object indicator) throws Exception {
        Object health = indicator.getClass().getMethod("health").invoke(indicator);
        return health.getClass().getMethod("getStatus").invoke(health).toString();
    }

    private static java.util.Map<?, ?> details(Object indicator) throws Exception {
        Object health = indicator.getClass().getMethod("health").invoke(indicator);
        return (java.util.Map<?, ?>) health.getClass().getMethod("getDetails").invoke(health);
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
