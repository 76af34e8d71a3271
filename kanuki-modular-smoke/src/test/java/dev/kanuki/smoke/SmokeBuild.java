package dev.kanuki.smoke;

import java.nio.file.Files;
import java.nio.file.Path;

/** Where this module's build put what the checks read: Maven passes the paths as system properties. */
final class SmokeBuild {
    private SmokeBuild() {
    }

    /** @return the directory of kanuki-core, -file, -redis, -jdbc and their run-time dependencies (jars) */
    static Path modulePath() {
        return directory("kanuki.smoke.modulePath");
    }

    /** @return the directory of every kanuki library jar, named {@code ARTIFACT.jar} */
    static Path libraryJars() {
        return directory("kanuki.smoke.libraryJars");
    }

    /** @return the sources of the modular application ({@code module-info.java} at the top) */
    static Path applicationSources() {
        return directory("kanuki.smoke.applicationSources");
    }

    private static Path directory(String property) {
        String value = System.getProperty(property);
        if (value == null || !Files.isDirectory(Path.of(value))) {
            throw new IllegalStateException("system property " + property + " names no directory (" + value
                    + "): run these tests through Maven's verify phase, which copies the packaged jars first"
                    + " (mvn -pl kanuki-modular-smoke -am verify)");
        }
        return Path.of(value);
    }
}
