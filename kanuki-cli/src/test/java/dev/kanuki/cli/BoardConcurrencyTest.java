package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.cli.board.BoardServer;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kanuki demo board} under many HTTP clients posting at once: every post kept under the
 * lock, in one process and across two; posts lost with {@code --lock none}; a token sent twice at
 * once posted once.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("slow")
class BoardConcurrencyTest {
    private static final int POSTS = 32;

    @TempDir
    Path dir;

    private static List<String> tokens(int n) {
        return IntStream.range(0, n).mapToObj(i -> UUID.randomUUID().toString()).toList();
    }

    private static void assertAllRedirected(List<HttpResponse<String>> responses) {
        for (HttpResponse<String> r : responses) {
            assertEquals(303, r.statusCode(), r::body);
        }
    }

    @Test
    void thirtyTwoPostsAtOnceAreAllKeptUnderTheLock() throws Exception {
        try (BoardServer board = BoardServer.start(0, "file:" + dir.resolve("locks"), dir.resolve("board.txt"))) {
            assertAllRedirected(BoardClient.postAll(List.of(board.url()), tokens(POSTS)));
            assertEquals(new BoardClient.Stats(POSTS, POSTS), BoardClient.stats(board.url()));
        }
    }

    @Test
    void withoutALockPostsSentAtOnceAreLost() throws Exception {
        try (BoardServer board = BoardServer.start(0, null, dir.resolve("board.txt"))) {
            assertAllRedirected(BoardClient.postAll(List.of(board.url()), tokens(POSTS)));
            BoardClient.Stats stats = BoardClient.stats(board.url());
            assertEquals(POSTS, stats.submitted(), "the O_APPEND log counts every submission");
            assertTrue(stats.kept() < POSTS, "no post was lost without the lock: " + stats);
        }
    }

    @Test
    void theSameTokenSentTwiceAtOnceIsOnePost() throws Exception {
        try (BoardServer board = BoardServer.start(0, "file:" + dir.resolve("locks"), dir.resolve("board.txt"))) {
            String token = UUID.randomUUID().toString();
            List<HttpResponse<String>> both = BoardClient.postAll(List.of(board.url()), List.of(token, token));
            for (HttpResponse<String> r : both) {
                assertTrue(r.statusCode() == 303 || r.statusCode() == 409, r.statusCode() + " " + r.body());
                if (r.statusCode() == 409) {
                    assertEquals(Optional.of("1"), r.headers().firstValue("Retry-After"));
                }
            }
            assertEquals(303, BoardClient.post(board.url(), token, "again").get().statusCode());
            assertEquals(new BoardClient.Stats(1, 1), BoardClient.stats(board.url()));
        }
    }

    @Test
    void twoBoardProcessesSharingOneFileKeepEveryPost() throws Exception {
        Path data = dir.resolve("shared.txt");
        String locks = "file:" + dir.resolve("locks");
        List<Cli.Running> boards = new ArrayList<>();
        try {
            List<URI> urls = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                boards.add(Cli.start(dir, "demo", "board", "--port", "0", "--data", data.toString(), "-b", locks));
            }
            for (Cli.Running board : boards) {
                urls.add(urlOf(board));
            }
            assertAllRedirected(BoardClient.postAll(urls, tokens(POSTS)));
            assertEquals(new BoardClient.Stats(POSTS, POSTS), BoardClient.stats(urls.get(0)));
            assertEquals(new BoardClient.Stats(POSTS, POSTS), BoardClient.stats(urls.get(1)));
        } finally {
            boards.forEach(b -> b.process.destroy());
            for (Cli.Running board : boards) {
                board.process.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    /** @return the URL a board process prints: {@code kanuki board: URL} */
    static URI urlOf(Cli.Running board) throws InterruptedException {
        String prefix = "kanuki board: ";
        Processes.await(() -> Processes.readQuietly(board.out).startsWith(prefix) && Processes.readQuietly(board.out).contains("\n")
                || !board.process.isAlive(), () -> "the board printed no URL");
        String out = Processes.readQuietly(board.out);
        assertTrue(out.startsWith(prefix), () -> "the board exited: " + Processes.readQuietly(board.err));
        return URI.create(out.lines().findFirst().orElseThrow().substring(prefix.length()));
    }
}
