package dev.kanuki.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import dev.kanuki.cli.board.BoardServer;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kanuki demo board --when-busy park}: posts that find the board's lock busy are parked
 * and answered at once, and the lock's holder applies them; over real HTTP, in one process and
 * in two board processes sharing one file.
 *
 * <p>That no post waited is checked three ways: every answer says {@code applied} or
 * {@code parked} ({@code Kanuki-Post}); the board's {@code lockWaits} (acquisitions of its lock
 * that could wait, counted on the lock itself) stays 0, where the waiting board counts one per
 * post ({@link #theWaitingBoardCountsItsLockWaits}); and, with the lock held by the test itself,
 * posts are answered {@code parked} while it is held, which a waiting post could not be.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BoardParkingTest {
    private static final int POSTS = 40;
    private static final Duration LIMIT = Duration.ofSeconds(90);

    @TempDir
    Path dir;

    private static List<String> tokens(int n) {
        return IntStream.range(0, n).mapToObj(i -> UUID.randomUUID().toString()).toList();
    }

    /** Each answer a 303 saying applied or parked; @return how many were parked */
    private static int assertAppliedOrParked(List<HttpResponse<String>> responses) {
        int parked = 0;
        for (HttpResponse<String> r : responses) {
            assertEquals(303, r.statusCode(), r::body);
            String outcome = r.headers().firstValue("Kanuki-Post").orElse("(none)");
            assertTrue(outcome.equals("applied") || outcome.equals("parked"), "Kanuki-Post: " + outcome);
            if (outcome.equals("parked")) {
                parked++;
                assertEquals("/?parked", r.headers().firstValue("Location").orElse(""));
            }
        }
        return parked;
    }

    /** Waits until nothing is parked and {@code expected} posts are on the board. */
    private static BoardClient.JsonStats awaitSettled(URI board, int expected) {
        BoardClient.JsonStats[] last = new BoardClient.JsonStats[1];
        await().atMost(LIMIT).pollInterval(Duration.ofMillis(200)).until(() -> {
            last[0] = BoardClient.jsonStats(board);
            return last[0].get("parked") == 0 && last[0].get("kept") >= expected;
        });
        return last[0];
    }

    /** Every token on the board exactly once: none lost, none doubled. */
    private static void assertEachPostOnce(Path data, List<String> tokens) throws Exception {
        List<String> lines = Files.readAllLines(data, StandardCharsets.UTF_8);
        List<String> onBoard = lines.stream().filter(l -> !l.isEmpty()).map(l -> l.substring(0, l.indexOf('\t'))).toList();
        Set<String> expected = new HashSet<>();
        for (String token : tokens) {
            expected.add(URLEncoder.encode(token, StandardCharsets.UTF_8));
        }
        assertEquals(tokens.size(), onBoard.size(), "posts on the board: " + onBoard.size());
        assertEquals(expected, new HashSet<>(onBoard), "the posts on the board are not the ones sent");
    }

    @Test
    void fortyPostsAtOnceAreAllAppliedAndNoneWaitsForTheLock() throws Exception {
        Path data = dir.resolve("board.txt");
        try (BoardServer board = BoardServer.start(0, "file:" + dir.resolve("locks"), data, true)) {
            List<String> tokens = tokens(POSTS);
            int parked = assertAppliedOrParked(BoardClient.postAll(List.of(board.url()), tokens));
            BoardClient.JsonStats stats = awaitSettled(board.url(), POSTS);
            assertEquals("park", stats.mode());
            assertEquals(POSTS, stats.get("submitted"));
            assertEquals(POSTS, stats.get("kept"));
            assertEquals(POSTS, stats.get("applied"));
            assertEquals(0, stats.get("lockWaits"), "an acquisition of the board's lock could wait: " + stats);
            assertEachPostOnce(data, tokens);
            // Informative only: how many found the lock busy depends on the machine's timing.
            System.out.println("parked " + parked + " of " + POSTS + " posts");
        }
    }

    @Test
    void postsAreParkedWhileTheLockIsHeldAndTheNextHolderAppliesThem() throws Exception {
        Path data = dir.resolve("board.txt").toAbsolutePath();
        String uri = "file:" + dir.resolve("locks");
        try (BoardServer board = BoardServer.start(0, uri, data, true);
             LockProvider other = LockProvider.open(uri)) {
            List<String> tokens = tokens(6);
            try (LockHandle held = other.lock("kanuki-board " + data).acquire(Duration.ofSeconds(30))) {
                // The lock is held here until every answer is in: an answer is proof its post did not wait.
                List<HttpResponse<String>> answers = BoardClient.postAll(List.of(board.url()), tokens.subList(0, 5));
                assertEquals(5, assertAppliedOrParked(answers), "every post found the lock busy");
                BoardClient.JsonStats stats = BoardClient.jsonStats(board.url());
                assertEquals(5, stats.get("parked"), stats::toString);
                assertEquals(0, stats.get("kept"), stats::toString);
                assertTrue(held.isHeld());
            }
            // The next post finds the lock free: it applies the five parked ones, then its own.
            List<HttpResponse<String>> last = BoardClient.postAll(List.of(board.url()), tokens.subList(5, 6));
            assertEquals(0, assertAppliedOrParked(last));
            BoardClient.JsonStats stats = awaitSettled(board.url(), 6);
            assertEquals(6, stats.get("kept"));
            assertEquals(0, stats.get("lockWaits"));
            assertEachPostOnce(data, tokens);
        }
    }

    @Test
    void theWaitingBoardCountsItsLockWaits() throws Exception {
        // The observable the parking tests rely on: without parking, every post takes the wait path.
        try (BoardServer board = BoardServer.start(0, "file:" + dir.resolve("locks"), dir.resolve("board.txt"))) {
            List<HttpResponse<String>> answers = BoardClient.postAll(List.of(board.url()), tokens(4));
            for (HttpResponse<String> r : answers) {
                assertEquals("locked", r.headers().firstValue("Kanuki-Post").orElse(""));
            }
            BoardClient.JsonStats stats = BoardClient.jsonStats(board.url());
            assertEquals("wait", stats.mode());
            assertTrue(stats.get("lockWaits") >= 4, stats::toString);
            assertEquals(4, stats.get("kept"));
        }
    }

    @Test
    void twoParkingBoardProcessesSharingOneFileKeepEveryPost() throws Exception {
        Path data = dir.resolve("shared.txt");
        String locks = "file:" + dir.resolve("locks");
        List<Cli.Running> boards = new ArrayList<>();
        try {
            List<URI> urls = new ArrayList<>();
            for (int i = 0; i < 2; i++) {
                boards.add(Cli.start(dir, "demo", "board", "--port", "0", "--data", data.toString(), "-b", locks,
                        "--when-busy", "park"));
            }
            for (Cli.Running board : boards) {
                urls.add(BoardConcurrencyTest.urlOf(board));
            }
            List<String> tokens = tokens(POSTS);
            assertAppliedOrParked(BoardClient.postAll(urls, tokens));
            for (URI url : urls) {
                BoardClient.JsonStats stats = awaitSettled(url, POSTS);
                assertEquals(POSTS, stats.get("submitted"), stats::toString);
                assertEquals(POSTS, stats.get("kept"), stats::toString);
                assertEquals(0, stats.get("lockWaits"), stats::toString);
            }
            assertEachPostOnce(data, tokens);
        } finally {
            boards.forEach(b -> b.process.destroy());
            for (Cli.Running board : boards) {
                board.process.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }
}
