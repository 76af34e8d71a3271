package dev.kanuki.cli;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.kanuki.cli.board.BoardServer;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.openqa.selenium.By;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.interactions.Actions;

/**
 * {@code kanuki demo board} in a real browser: headless Chromium from Debian ({@code chromium},
 * {@code chromium-driver}) driven by Selenium through {@code /usr/bin/chromedriver}, named
 * explicitly (no Selenium Manager, no download). Without the browser the tests fail and say
 * what to install: {@code scripts/test.sh} installs it.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Tag("browser")
class BoardBrowserTest {
    private static final Path CHROMIUM = Path.of("/usr/bin/chromium");
    private static final Path CHROMEDRIVER = Path.of("/usr/bin/chromedriver");
    private static final Duration LIMIT = Duration.ofSeconds(30);
    private static ChromeDriverService service;
    private static ChromeDriver browser;
    private static Path profile;

    @TempDir
    Path dir;
    private BoardServer board;

    @BeforeAll
    static void startBrowser() throws Exception {
        for (Path program : List.of(CHROMIUM, CHROMEDRIVER)) {
            if (!Files.isExecutable(program)) {
                throw new AssertionError(program + " is missing: the browser tests need Debian's chromium and "
                        + "chromium-driver (apt-get install -y chromium chromium-driver; scripts/test.sh installs them)");
            }
        }
        profile = Files.createTempDirectory("kanuki-chromium");
        service = new ChromeDriverService.Builder().usingDriverExecutable(CHROMEDRIVER.toFile()).usingAnyFreePort()
                .withLogOutput(java.io.OutputStream.nullOutputStream()).build();
        ChromeOptions options = new ChromeOptions();
        options.setBinary(CHROMIUM.toFile());
        options.addArguments("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync",
                "--window-size=900,700", "--user-data-dir=" + profile);
        browser = new ChromeDriver(service, options);
        browser.manage().timeouts().pageLoadTimeout(LIMIT).scriptTimeout(LIMIT);
    }

    @AfterAll
    static void stopBrowser() throws Exception {
        if (browser != null) {
            browser.quit();
        }
        if (service != null) {
            service.stop();
        }
        if (profile != null) {
            try (var files = Files.walk(profile)) {
                files.sorted(java.util.Comparator.reverseOrder()).map(Path::toFile).forEach(File::delete);
            }
        }
    }

    @BeforeEach
    void startBoard() throws Exception {
        board = BoardServer.start(0, "file:" + dir.resolve("locks"), dir.resolve("board.txt"));
    }

    @AfterEach
    void stopBoard() throws Exception {
        board.close();
    }

    private void open() {
        browser.get(board.url().toString());
        assertEquals("kanuki board", browser.getTitle());
    }

    private long postsReading(String text) {
        return browser.findElements(By.cssSelector("#posts .text")).stream().filter(e -> e.getText().equals(text)).count();
    }

    private void fill(String author, String text) {
        browser.findElement(By.id("author")).sendKeys(author);
        browser.findElement(By.id("text")).sendKeys(text);
    }

    @Test
    void postsThroughTheFormAndShowsTheCounts() throws Exception {
        String[][] posts = {{"Aiko", "Lunch at noon in the big room"}, {"Ben", "The 3rd floor printer is fixed"},
            {"Chen", "Who took my stapler? <b>again</b>"}};
        for (String[] post : posts) {
            open();
            fill(post[0], post[1]);
            browser.findElement(By.id("submit")).click();
            await().atMost(LIMIT).until(() -> postsReading(post[1]) == 1);
        }
        assertEquals("3", browser.findElement(By.id("submitted")).getText());
        assertEquals("3", browser.findElement(By.id("kept")).getText());
        assertEquals("0", browser.findElement(By.id("lost")).getText());
        Path shot = Path.of("target", "board.png");
        Files.createDirectories(shot.getParent());
        Files.copy(browser.getScreenshotAs(OutputType.FILE).toPath(), shot, StandardCopyOption.REPLACE_EXISTING);
        assertTrue(Files.size(shot) > 1000, "a screenshot was written to " + shot.toAbsolutePath());
    }

    @Test
    void aDoubleClickedSubmitIsOnePost() throws Exception {
        open();
        fill("Dora", "clicked twice");
        WebElement submit = browser.findElement(By.id("submit"));
        new Actions(browser).doubleClick(submit).perform();
        await().atMost(LIMIT).until(() -> BoardClient.stats(board.url()).kept() == 1);
        open();
        assertEquals(1, postsReading("clicked twice"));
        assertEquals(new BoardClient.Stats(1, 1), BoardClient.stats(board.url()));
    }

    @Test
    void theSameFormSentTwiceAtOnceFromThePageIsOnePost() throws Exception {
        open();
        fill("Emil", "sent twice");
        // Two submissions of one form that the browser certainly sends (a double click may be
        // folded into one navigation): both carry the same one-time token.
        @SuppressWarnings("unchecked")
        List<Object> statuses = (List<Object>) browser.executeAsyncScript(
                "const done = arguments[arguments.length - 1];"
                        + "const form = document.getElementById('post-form');"
                        + "const send = () => fetch('post', {method: 'POST', redirect: 'manual',"
                        + "  body: new URLSearchParams(new FormData(form))}).then(r => r.type === 'opaqueredirect' ? 303 : r.status);"
                        + "Promise.all([send(), send()]).then(done, e => done(String(e)));");
        for (Object status : statuses) {
            assertTrue(status.equals(303L) || status.equals(409L), "status " + status);
        }
        open();
        assertEquals(1, postsReading("sent twice"));
        assertEquals(new BoardClient.Stats(1, 1), BoardClient.stats(board.url()));
    }
}
