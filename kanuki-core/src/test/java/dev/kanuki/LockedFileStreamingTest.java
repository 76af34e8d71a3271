package dev.kanuki;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A {@link LockedFile} updated and read as streams needs no heap in proportion to the file: a
 * child JVM whose heap is half the file's size writes, reads and rewrites it. (Measured by hand
 * with 500 MB under -Xmx256m, see docs/architecture.md "Memory".) Sizes can be set with
 * {@code -Dkanuki.streaming.mb} and {@code -Dkanuki.streaming.xmx}.
 */
class LockedFileStreamingTest {
    @TempDir
    Path dir;

    @Test
    void aFileTwiceTheHeapIsWrittenReadAndRewritten() throws Exception {
        long megabytes = Long.getLong("kanuki.streaming.mb", 64);
        String xmx = System.getProperty("kanuki.streaming.xmx", "32m");
        Path file = dir.resolve("big.bin");
        Path out = dir.resolve("child.out");
        Path err = dir.resolve("child.err");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process child = new ProcessBuilder(java, "-Xmx" + xmx, "-XX:+UseSerialGC", "-cp",
                System.getProperty("java.class.path"), LockedFileStreamingMain.class.getName(),
                file.toString(), Long.toString(megabytes << 20))
                .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertTrue(child.waitFor(10, TimeUnit.MINUTES), "the child JVM did not finish in 10 minutes");
        String said = Files.readString(out).strip();
        assertEquals(0, child.exitValue(), "the child JVM (-Xmx" + xmx + ", " + megabytes + " MB) failed: "
                + said + " " + Files.readString(err));
        assertTrue(said.startsWith("ok "), said);
        assertEquals((megabytes << 20) + 1, Files.size(file));
        System.out.println("LockedFile " + megabytes + " MB under -Xmx" + xmx + ": peak heap "
                + Long.parseLong(said.substring(3)) / (1 << 20) + " MB");
    }
}
