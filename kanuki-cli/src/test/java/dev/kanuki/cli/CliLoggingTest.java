package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;

/** The library's warnings reach the terminal as one line each; stack traces only under --debug. */
class CliLoggingTest {
    @Test
    void aWarningWithAnExceptionIsOneLineUnlessDebugging() {
        Logger log = new CliLogging().getLoggerFactory().getLogger("dev.kanuki.file.OsLockBackend");
        IOException cause = new IOException("Input/output error");
        try {
            CliLogging.setDebug(false);
            String plain = stderrOf(() -> {
                log.warn("releasing {} failed; it frees when its lease runs out", "/locks/x.lock", cause);
                log.info("not shown");
                log.debug("not shown either");
            });
            assertEquals("kanuki: warning: releasing /locks/x.lock failed; it frees when its lease runs out: "
                    + "Input/output error\n", plain);

            CliLogging.setDebug(true);
            String debug = stderrOf(() -> {
                log.warn("releasing {} failed", "/locks/x.lock", cause);
                log.debug("shown");
            });
            assertTrue(debug.startsWith("kanuki: warning: releasing /locks/x.lock failed\n"
                    + "java.io.IOException: Input/output error\n\tat "), debug);
            assertTrue(debug.endsWith("kanuki: debug: shown\n"), debug);
        } finally {
            CliLogging.setDebug(false);
        }
    }

    @Test
    void aClientLibrarysWarningsAreShownOnlyWhenDebugging() {
        // e.g. ZooKeeper's "Session 0x0 for server ... Connection refused" before kanuki's own message
        Logger library = new CliLogging().getLoggerFactory().getLogger("org.apache.zookeeper.ClientCnxn");
        try {
            CliLogging.setDebug(false);
            assertEquals("", stderrOf(() -> {
                library.warn("Session 0x0 for server 127.0.0.1:1, Closing socket connection");
                library.error("unexpected");
            }));
            CliLogging.setDebug(true);
            assertTrue(stderrOf(() -> library.warn("Session 0x0")).startsWith("kanuki: warning: Session 0x0"));
        } finally {
            CliLogging.setDebug(false);
        }
    }

    private static String stderrOf(Runnable action) {
        PrintStream saved = System.err;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setErr(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            action.run();
        } finally {
            System.setErr(saved);
        }
        return bytes.toString(StandardCharsets.UTF_8);
    }
}
