package dev.kanuki.cli;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Notices that the JVM refused the class-data sharing archive the {@code bin/kanuki} launcher
 * gave it, and deletes the archive's key file so that the launcher makes the archive again.
 *
 * <p>The launcher keys the archive only on the path of {@code java} and the class path, read
 * with shell built-ins, because running {@code stat(1)} on every start costs milliseconds. The
 * JVM checks the archive fully (each jar's size and time, its own build) and, under
 * {@code -Xshare:auto}, runs without sharing when it does not match: {@code java.vm.info} then
 * lacks "sharing". This costs one property read on every start.
 */
final class SharingArchiveCheck {
    /** The system property in which the launcher names the key file of the archive it passed. */
    static final String KEY_FILE_PROPERTY = "kanuki.cds.key";
    /**
     * A refused archive made after every file it depends on last changed is made again only
     * once it is this old, so that an archive the JVM can never use costs one remake per hour,
     * not one per run.
     */
    private static final Duration REMAKE_AT_MOST_EVERY = Duration.ofHours(1);

    private SharingArchiveCheck() {
    }

    /** Deletes the key file named by the launcher when the JVM runs without its archive. */
    static void run() {
        String keyFile = System.getProperty(KEY_FILE_PROPERTY);
        if (keyFile == null || System.getProperty("java.vm.info", "").contains("sharing")) {
            return;
        }
        try {
            Path key = Path.of(keyFile);
            String name = key.getFileName().toString();
            if (!name.endsWith(".jsa.key")) {
                return;
            }
            Path archive = key.resolveSibling(name.substring(0, name.length() - ".key".length()));
            if (shouldRemake(archive)) {
                Files.deleteIfExists(key);
            }
        } catch (IOException | RuntimeException e) {
            // The archive is a speed-up: a failure here costs start-up time, never a result.
        }
    }

    private static boolean shouldRemake(Path archive) throws IOException {
        if (!Files.isRegularFile(archive)) {
            return true;
        }
        FileTime made = Files.getLastModifiedTime(archive);
        for (Path dependency : dependencies()) {
            if (Files.exists(dependency) && lastChanged(dependency).compareTo(made) > 0) {
                return true;
            }
        }
        return made.toInstant().isBefore(Instant.now().minus(REMAKE_AT_MOST_EVERY));
    }

    /**
     * @return when the file last changed: its status-change time where the file system has one,
     *     since a jar unpacked again or a Java updated in place keeps its package's older
     *     modification time, but gets a new status-change time
     */
    private static FileTime lastChanged(Path file) throws IOException {
        FileTime modified = Files.getLastModifiedTime(file);
        try {
            FileTime changed = (FileTime) Files.getAttribute(file, "unix:ctime");
            return changed.compareTo(modified) > 0 ? changed : modified;
        } catch (UnsupportedOperationException | IllegalArgumentException e) {
            return modified;
        }
    }

    /** @return the files an archive of kanuki's classes was made from */
    private static List<Path> dependencies() {
        List<Path> files = new ArrayList<>();
        for (String entry : System.getProperty("java.class.path", "").split(File.pathSeparator)) {
            if (!entry.isEmpty()) {
                files.add(Path.of(entry));
            }
        }
        Path javaHome = Path.of(System.getProperty("java.home"));
        files.add(javaHome.resolve("lib").resolve("modules"));
        files.add(javaHome.resolve("lib").resolve("server").resolve("libjvm.so"));
        return files;
    }
}
