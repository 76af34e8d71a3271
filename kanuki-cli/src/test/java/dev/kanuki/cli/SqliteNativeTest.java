package dev.kanuki.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** {@code sqlite:} loads one extracted native library per user and leaves nothing in the temporary directory. */
@Timeout(120)
class SqliteNativeTest {
    @TempDir
    Path dir;

    @Test
    void theNativeLibraryIsExtractedOnceIntoTheCacheAndNothingIntoTmp() throws Exception {
        Path tmp = Files.createDirectories(dir.resolve("tmp"));
        Path cache = Files.createDirectories(dir.resolve("cache"));
        Map<String, String> env = Map.of("XDG_CACHE_HOME", cache.toString(),
                "JAVA_TOOL_OPTIONS", "-Djava.io.tmpdir=" + tmp);
        String run = "exec \"$KANUKI\" run -b sqlite:" + dir.resolve("locks") + " job -- true";

        Cli.Result first = Cli.startShell(dir, env, run).await();
        assertEquals(0, first.exitCode(), first::err);
        List<Path> libraries = librariesIn(cache);
        assertEquals(1, libraries.size(), "extracted: " + libraries);
        assertTrue(libraries.get(0).toString().contains("/kanuki/sqlite-"), libraries::toString);
        FileTime extracted = Files.getLastModifiedTime(libraries.get(0));

        Cli.Result second = Cli.startShell(dir, env, run).await();
        assertEquals(0, second.exitCode(), second::err);
        assertEquals(libraries, librariesIn(cache));
        assertEquals(extracted, Files.getLastModifiedTime(libraries.get(0)), "the library was extracted again");
        try (Stream<Path> left = Files.list(tmp)) {
            assertEquals(List.of(), left.toList(), "left in the temporary directory");
        }
    }

    private static List<Path> librariesIn(Path cache) throws Exception {
        try (Stream<Path> files = Files.walk(cache)) {
            return files.filter(p -> p.getFileName().toString().contains("sqlitejdbc")).toList();
        }
    }
}
