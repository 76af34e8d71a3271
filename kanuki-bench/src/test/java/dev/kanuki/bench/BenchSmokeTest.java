package dev.kanuki.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.kanuki.LockProvider;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.openjdk.jmh.annotations.Param;

/**
 * Runs every benchmark body a few times without JMH, so a broken benchmark shows up in
 * {@code mvn test} instead of halfway through a long run. Measures nothing. Benchmarks on the
 * {@code file:} backend are skipped while no kanuki backend handles {@code file:}.
 */
class BenchSmokeTest {

    private static boolean fileBackendPresent() {
        try (LockProvider ignored = LockProvider.open("file:" + System.getProperty("java.io.tmpdir") + "?strategy=os")) {
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void uncontendedMemAndRaw() throws Exception {
        UncontendedBench bench = new UncontendedBench();
        UncontendedBench.Mem mem = new UncontendedBench.Mem();
        mem.setUp();
        try {
            long first = bench.kanukiMem(mem);
            long second = bench.kanukiMemTry(mem);
            assertEquals(first + 1, second, "fencing tokens increase by one per acquisition");
        } finally {
            mem.tearDown();
        }
        bench.rawReentrantLock(new UncontendedBench.Reentrant());
        UncontendedBench.RawFile raw = new UncontendedBench.RawFile();
        raw.setUp();
        try {
            bench.rawFileChannel(raw);
            for (long expected = 1; expected <= 5; expected++) {
                assertEquals(expected, bench.rawFileChannelWithRecord(raw), "the record's counter");
            }
            assertEquals(6, bench.rawFileChannelWithRecordAndCheck(raw), "the record's counter");
        } finally {
            raw.tearDown();
        }
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS)
    void uncontendedFileOs() throws Exception {
        assumeTrue(fileBackendPresent(), "no kanuki backend handles 'file:' yet (kanuki-file)");
        UncontendedBench bench = new UncontendedBench();
        UncontendedBench.FileOs os = new UncontendedBench.FileOs();
        os.setUp();
        try {
            long first = bench.kanukiFileOs(os);
            long second = bench.kanukiFileOsTry(os);
            assertEquals(first + 1, second, "fencing tokens increase by one per acquisition");
        } finally {
            os.tearDown();
        }
    }

    @Test
    void recordByHandRejectsDamage(@TempDir Path dir) throws Exception {
        Path file = dir.resolve("damaged.lock");
        Files.write(file, new byte[OwnerRecordByHand.SIZE]);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            assertThrows(IOException.class, () -> new OwnerRecordByHand().stamp(channel));
        }
    }

    @Test
    void handoffBenchRunsEveryKind() throws Exception {
        String[] values = HandoffBench.class.getField("impl").getAnnotation(Param.class).value();
        assertEquals(HandoffPair.KINDS, List.of(values), "HandoffBench's @Param and HandoffPair.KINDS must agree");
    }

    @ParameterizedTest
    @MethodSource("dev.kanuki.bench.HandoffPair#kinds")
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void handoff(String kind) throws Exception {
        if (kind.contains("KanukiFileOs")) {
            assumeTrue(fileBackendPresent(), "no kanuki backend handles 'file:' yet (kanuki-file)");
        }
        try (HandoffPair pair = HandoffPair.open(kind)) {
            for (int i = 0; i < 200; i++) {
                pair.step();
            }
            pair.checkPartner();
        }
    }
}
