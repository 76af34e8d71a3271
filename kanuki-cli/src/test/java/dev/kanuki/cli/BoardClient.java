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
