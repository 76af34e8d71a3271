package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kanuki run -w} keeps its wait when the server cannot answer: a port that accepts
 * connections (the kernel completes them) but never answers, as a paused server or one without
 * a quorum does. Each URI asks for a connect timeout of 20 s, so a run that waited for the
 * backend's own bound instead of {@code -w 2s} shows plainly; the bound checked is the wait plus
 * a generous allowance for starting a JVM on a loaded machine.
 */
class RunDeadlineTest {
    private static final long WAIT_MILLIS = 2_000;
    /** Starting the command's JVM and loading a client library, on a loaded machine. */
    private static final long STARTUP_SLACK_MILLIS = 8_000;
    private static ServerSocket silent;

    @TempDir
    Path dir;

    @BeforeAll
    static void listenWithoutAnswering() throws Exception {
        silent = new ServerSocket(0, 50, InetAddress.getLoopbackAddress()); // never accepted: nothing answers
    }

    @AfterAll
    static void close() throws Exception {
        silent.close();
    }

    @ParameterizedTest
    @ValueSource(strings = {"zookeeper://127.0.0.1:PORT?timeout=20s", "etcd://127.0.0.1:PORT?timeout=20s",
            "redis://127.0.0.1:PORT?timeout=20s", "memcached://127.0.0.1:PORT?timeout=20s",
            "postgresql://127.0.0.1:PORT/db?user=u&connectTimeout=20s"})
    void runKeepsItsWaitWhenTheServerDoesNotAnswer(String template) throws Exception {
        String uri = template.replace("PORT", Integer.toString(silent.getLocalPort()));
        Cli.Result r = Cli.start(dir, "run", "-w", WAIT_MILLIS + "ms", "-b", uri, "deadline", "--", "true").await();
        assertEquals(ExitCodes.BACKEND, r.exitCode(), r.err());
        long took = r.elapsed().toMillis();
        assertTrue(took < WAIT_MILLIS + STARTUP_SLACK_MILLIS, "run -w 2s on " + uri + " took " + took + "ms: "
                + r.err());
        assertEquals(1, r.errLines().stream().filter(l -> l.startsWith("kanuki: ")).count(), r.err());
        assertTrue(r.err().contains("127.0.0.1:" + silent.getLocalPort()), "the message names the server: " + r.err());
    }
}
