package dev.kanuki.cli;

import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/** Posts to a {@code kanuki demo board} and reads its counts, over HTTP/1.1 (one connection per request in flight). */
final class BoardClient {
    private static final HttpClient CLIENT = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).followRedirects(HttpClient.Redirect.NEVER).build();

    private BoardClient() {
    }

    /** The board's two counts. */
    record Stats(int submitted, int kept) {
    }

    /** @return a POST of the board's form, not yet answered */
    static CompletableFuture<HttpResponse<String>> post(URI board, String token, String text) {
        String form = Map.of("token", token, "author", "test", "text", text).entrySet().stream()
                .map(e -> e.getKey() + "=" + URLEncoder.encode(e.getValue(), StandardCharsets.UTF_8))
                .collect(Collectors.joining("&"));
        HttpRequest request = HttpRequest.newBuilder(board.resolve("post")).timeout(Duration.ofSeconds(60))
                .header("Content-Type", "application/x-www-form-urlencoded")
                .POST(HttpRequest.BodyPublishers.ofString(form)).build();
        return CLIENT.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    /** Sends all posts at once; @return their responses, in order */
    static List<HttpResponse<String>> postAll(List<URI> boards, List<String> tokens) throws Exception {
        List<CompletableFuture<HttpResponse<String>>> pending = new ArrayList<>();
        for (int i = 0; i < tokens.size(); i++) {
            pending.add(post(boards.get(i % boards.size()), tokens.get(i), "post " + i));
        }
        List<HttpResponse<String>> responses = new ArrayList<>();
        for (CompletableFuture<HttpResponse<String>> p : pending) {
            responses.add(p.get(60, TimeUnit.SECONDS));
        }
        return responses;
    }

    /** The counts of a board as its {@code /stats} gives them in JSON, by name; {@code mode} as its own field. */
    record JsonStats(String mode, Map<String, Long> counts) {
        long get(String name) {
            Long value = counts.get(name);
            if (value == null) {
                throw new AssertionError("no " + name + " in " + counts);
            }
            return value;
        }
    }

    /** @return {@code GET /stats} asked for JSON ({@code Accept: application/json}) */
    static JsonStats jsonStats(URI board) throws Exception {
        HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(board.resolve("stats"))
                .header("Accept", "application/json").timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200 || !r.headers().firstValue("Content-Type").orElse("").startsWith("application/json")) {
            throw new AssertionError("GET /stats (JSON) answered " + r.statusCode() + " " + r.headers() + ": " + r.body());
        }
        java.util.regex.Matcher mode = java.util.regex.Pattern.compile("\"mode\":\"(\\w+)\"").matcher(r.body());
        if (!mode.find()) {
            throw new AssertionError("no mode in " + r.body());
        }
        Map<String, Long> counts = new java.util.LinkedHashMap<>();
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("\"(\\w+)\":(\\d+)").matcher(r.body());
        while (m.find()) {
            counts.put(m.group(1), Long.parseLong(m.group(2)));
        }
        return new JsonStats(mode.group(1), counts);
    }

    static Stats stats(URI board) throws Exception {
        HttpResponse<String> r = CLIENT.send(HttpRequest.newBuilder(board.resolve("stats")).build(),
                HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200) {
            throw new AssertionError("GET /stats answered " + r.statusCode() + ": " + r.body());
        }
        Map<String, Integer> counts = r.body().lines().map(l -> l.split(" "))
                .collect(Collectors.toMap(f -> f[0], f -> Integer.parseInt(f[1])));
        return new Stats(counts.get("submitted"), counts.get("kept"));
    }
}
