package dev.kanuki.example;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/** What both stores' tests check on a pair of running instances. */
final class Scenarios {
    /** The application's name, put before every lock name ({@code spring.application.name}). */
    static final String PREFIX = "kanuki-example/";
    /**
     * How long an order takes in the tests: long enough that the second of two concurrent
     * requests, and the look at {@code /actuator/locks}, arrive while the first holds its lock on a
     * loaded machine; the answer of the first takes this long.
     */
    static final String ORDER_WORK = "5s";

    private Scenarios() {
    }

    /** The arguments every test instance gets: a one-second tick, the shared ticks file. */
    static List<String> commonArgs(Path ticksFile) {
        return List.of("--example.tick-seconds=1", "--example.tick-hold=1s", "--example.ticks-file=" + ticksFile,
                "--example.order-work=" + ORDER_WORK);
    }

    /** {@return the kanuki component of the instance's health, checked UP} */
    static JsonNode kanukiHealthIsUp(Instance instance) throws IOException {
        JsonNode health = instance.getJson("/actuator/health");
        JsonNode kanuki = health.path("components").path("kanuki");
        assertThat(kanuki.path("status").asText()).as("kanuki health of %s: %s", instance, health).isEqualTo("UP");
        return kanuki;
    }

    /**
     * Two concurrent {@code POST /orders} with one idempotency key, one to each instance: one is
     * placed (200), the other refused with 409 and {@code Retry-After}; while the order is placed,
     * the {@code locks} endpoint of the instance placing it shows the lock held.
     *
     * @return the instance that placed the order
     */
    static Instance oneOfTwoConcurrentOrdersIsRefused(Instance a, Instance b) throws Exception {
        String key = "key-" + UUID.randomUUID();
        String lockName = PREFIX + "order-" + key;
        var toA = a.postOrder(key);
        var toB = b.postOrder(key);
        // while the order is being placed, one instance shows the lock in /actuator/locks
        Instance[] holder = new Instance[1];
        await("the order's lock shown by /actuator/locks").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(100)).until(() -> {
                    assertThat(toA.isDone() && toB.isDone()).as("both orders answered before the lock was seen held")
                            .isFalse();
                    for (Instance i : List.of(a, b)) {
                        JsonNode locks = i.getJson("/actuator/locks");
                        for (JsonNode held : locks.path("held")) {
                            if (held.path("name").asText().equals(lockName)) {
                                assertThat(held.path("lost").asBoolean()).isFalse();
                                holder[0] = i;
                                return true;
                            }
                        }
                    }
                    return false;
                });
        HttpResponse<String> answerA = toA.get(120, TimeUnit.SECONDS);
        HttpResponse<String> answerB = toB.get(120, TimeUnit.SECONDS);
        List<Integer> statuses = List.of(answerA.statusCode(), answerB.statusCode());
        assertThat(statuses).as("answers of %s: %s / %s: %s", a, answerA.body(), b, answerB.body())
                .containsExactlyInAnyOrder(200, 409);
        HttpResponse<String> placed = answerA.statusCode() == 200 ? answerA : answerB;
        HttpResponse<String> refused = answerA.statusCode() == 409 ? answerA : answerB;
        Instance placer = placed == answerA ? a : b;
        assertThat(placer).as("the instance that showed the lock placed the order").isSameAs(holder[0]);
        JsonNode order = Instance.JSON.readTree(placed.body());
        assertThat(order.path("order").asText()).isEqualTo(key);
        assertThat(order.path("pid").asLong()).isEqualTo(placer.pid());
        assertThat(refused.headers().firstValue("Retry-After")).as("Retry-After of the 409").isPresent()
                .get().satisfies(v -> assertThat(Long.parseLong(v)).isPositive());
        // the lock is free again: the same key is placed once more (not an idempotency store, only a lock)
        await("the order's lock released").atMost(Duration.ofSeconds(60)).until(() -> {
            for (JsonNode held : placer.getJson("/actuator/locks").path("held")) {
                if (held.path("name").asText().equals(lockName)) {
                    return false;
                }
            }
            return true;
        });
        return placer;
    }

    /** {@code /actuator/metrics/kanuki.lock.acquire}: the timer, with its outcome tag, counted acquisitions. */
    static void acquireMetricsShown(Instance instance) throws IOException {
        JsonNode metric = instance.getJson("/actuator/metrics/kanuki.lock.acquire");
        assertThat(metric.path("name").asText()).isEqualTo("kanuki.lock.acquire");
        double count = -1;
        for (JsonNode m : metric.path("measurements")) {
            if (m.path("statistic").asText().equals("COUNT")) {
                count = m.path("value").asDouble();
            }
        }
        assertThat(count).as("acquisitions counted: %s", metric).isPositive();
        List<String> tags = new ArrayList<>();
        metric.path("availableTags").forEach(t -> tags.add(t.path("tag").asText()));
        assertThat(tags).as("tags of %s", metric).contains("outcome", "scheme");
    }

    /**
     * Waits until the ticks file has {@code count} ticks after {@code afterTick} (both instances
     * running), then checks that no tick was run twice in the whole file.
     *
     * @return the ticks with the pids that ran them, for the test's output
     */
    static Map<Long, List<String>> onceEveryTick(Path ticksFile, long afterTick, int count, Instance... running)
            throws IOException {
        await("" + count + " ticks after tick " + afterTick).atMost(Duration.ofSeconds(60 + 3L * count))
                .pollInterval(Duration.ofMillis(500)).until(() -> {
                    for (Instance i : running) {
                        assertThat(i.process.isAlive()).as("%s alive:\n%s", i, i.tail()).isTrue();
                    }
                    return ticks(ticksFile).keySet().stream().filter(t -> t > afterTick).count() >= count;
                });
        Map<Long, List<String>> ticks = ticks(ticksFile);
        Map<Long, List<String>> twice = ticks.entrySet().stream().filter(e -> e.getValue().size() > 1)
                .collect(Collectors.toMap(Map.Entry::getKey, Map.Entry::getValue, (x, y) -> x, TreeMap::new));
        assertThat(twice).as("ticks run more than once (tick -> pids), of %s ticks", ticks.size()).isEmpty();
        return ticks;
    }

    /** {@return the ticks file's complete lines: tick -> the pids that ran it} */
    static Map<Long, List<String>> ticks(Path ticksFile) throws IOException {
        Map<Long, List<String>> ticks = new TreeMap<>();
        if (!Files.exists(ticksFile)) {
            return ticks;
        }
        String text = Files.readString(ticksFile, StandardCharsets.UTF_8);
        // a line still being appended (no newline yet) is left for the next look
        String complete = text.substring(0, text.lastIndexOf('\n') + 1);
        for (String line : complete.lines().toList()) {
            String[] f = line.split(" ");
            assertThat(f).as("line '%s'", line).hasSize(3);
            assertThat(f[0]).isEqualTo("tick");
            ticks.computeIfAbsent(Long.parseLong(f[1]), t -> new ArrayList<>()).add(f[2]);
        }
        return ticks;
    }

    /** {@return how many ticks between the first and the last after {@code afterTick} no instance ran} */
    static long gaps(Map<Long, List<String>> ticks, long afterTick) {
        List<Long> after = ticks.keySet().stream().filter(t -> t > afterTick).toList();
        if (after.isEmpty()) {
            return 0;
        }
        return after.get(after.size() - 1) - after.get(0) + 1 - after.size();
    }
}
