package dev.kanuki.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * Over real HTTP (a server on a free port): a busy {@code @Locked(onBusy = THROW)} handler is
 * answered 409 Conflict with Retry-After, and {@code kanuki.web.*} registers the servlet filter.
 */
@SpringBootTest(classes = LockedWebTest.App.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"kanuki.web.url-patterns=/filtered/*", "kanuki.web.key=header:Idempotency-Key",
                "kanuki.web.retry-after=3s", "spring.application.name=shop"})
class LockedWebTest {
    private static final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(30)).build();
    static volatile CountDownLatch entered = new CountDownLatch(1);
    static volatile CountDownLatch release = new CountDownLatch(1);

    @DynamicPropertySource
    static void lockDirectory(DynamicPropertyRegistry registry) throws IOException {
        Path target = Path.of("target");
        Files.createDirectories(target);
        Path dir = Files.createTempDirectory(target.toAbsolutePath(), "locked-web-test-");
        registry.add("kanuki.uri", () -> "file:" + dir);
    }

    @Value("${local.server.port}")
    int port;

    private HttpRequest post(String path, String key) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(60)).POST(HttpRequest.BodyPublishers.noBody());
        if (key != null) {
            b.header("Idempotency-Key", key);
        }
        return b.build();
    }

    @Test
    void aBusyLockedHandlerIsAnswered409WithRetryAfter() throws Exception {
        entered = new CountDownLatch(1);
        release = new CountDownLatch(1);
        CompletableFuture<HttpResponse<String>> first = http.sendAsync(post("/orders/o-1", null),
                HttpResponse.BodyHandlers.ofString());
        assertThat(entered.await(60, TimeUnit.SECONDS)).isTrue();
        HttpResponse<String> second = http.send(post("/orders/o-1", null), HttpResponse.BodyHandlers.ofString());
        assertThat(second.statusCode()).isEqualTo(409);
        assertThat(second.headers().firstValue("Retry-After")).hasValue("3");
        assertThat(second.headers().firstValue("Cache-Control")).hasValue("no-store");
        HttpResponse<String> other = http.send(post("/orders/o-2-fast", null), HttpResponse.BodyHandlers.ofString());
        assertThat(other.statusCode()).as("another order is not locked out").isEqualTo(200);
        assertThat(other.body()).isEqualTo("placed o-2-fast under shop/order-o-2-fast");
        release.countDown();
        HttpResponse<String> done = first.get(60, TimeUnit.SECONDS);
        assertThat(done.statusCode()).isEqualTo(200);
        assertThat(done.body()).isEqualTo("placed o-1 under shop/order-o-1");
    }

    @Test
    void theFilterFromPropertiesLocksOneRequestPerKey() throws Exception {
        entered = new CountDownLatch(1);
        release = new CountDownLatch(1);
        CompletableFuture<HttpResponse<String>> first = http.sendAsync(post("/filtered/slow", "k1"),
                HttpResponse.BodyHandlers.ofString());
        assertThat(entered.await(60, TimeUnit.SECONDS)).isTrue();
        HttpResponse<String> second = http.send(post("/filtered/fast", "k1"), HttpResponse.BodyHandlers.ofString());
        assertThat(second.statusCode()).isEqualTo(409);
        assertThat(second.headers().firstValue("Retry-After")).hasValue("3");
        HttpResponse<String> other = http.send(post("/filtered/fast", "k2"), HttpResponse.BodyHandlers.ofString());
        assertThat(other.statusCode()).isEqualTo(200);
        release.countDown();
        assertThat(first.get(60, TimeUnit.SECONDS).statusCode()).isEqualTo(200);
    }

    /** The application. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class App {
        @Bean
        OrderService orderService() {
            return new OrderService();
        }

        @Bean
        Orders orders(OrderService service) {
            return new Orders(service);
        }
    }

    static class OrderService {
        @Locked(value = "order-#{#key}", onBusy = Locked.OnBusy.THROW)
        public String place(String key) throws InterruptedException {
            if (!key.endsWith("fast")) {
                entered.countDown();
                release.await(60, TimeUnit.SECONDS);
            }
            return "placed " + key + " under " + LockedContext.current().name();
        }
    }

    @RestController
    static class Orders {
        private final OrderService service;

        Orders(OrderService service) {
            this.service = service;
        }

        @PostMapping("/orders/{key}")
        String order(@PathVariable String key) throws InterruptedException {
            return service.place(key);
        }

        @PostMapping("/filtered/{mode}")
        String filtered(@PathVariable String mode) throws InterruptedException {
            if (mode.equals("slow")) {
                entered.countDown();
                release.await(60, TimeUnit.SECONDS);
            }
            return "ok";
        }
    }
}
