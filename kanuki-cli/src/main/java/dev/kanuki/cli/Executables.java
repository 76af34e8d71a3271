package dev.kanuki.cli;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Finds out whether a command can be started before starting it, as {@code execvp} would look
 * for it: {@code kanuki run} starts the command through a launcher, which would otherwise report
 * a missing command in its own words.
 */
final class Executables {
    private static final String NOT_FOUND = "No such file or directory";
    private static final String PERMISSION_DENIED = "Permission denied";

    private Executables() {
    }

    /**
     * @param command a command name ({@code make}, looked up on {@code PATH}) or path ({@code ./x})
     * @return why it cannot be run ("No such file or directory", "Permission denied"), or empty
     */
    static Optional<String> whyNotRunnable(String command) {
        if (command.isEmpty()) {
            return Optional.of(NOT_FOUND);
        }
        if (command.contains("/")) {
            return check(Path.of(command));
        }
        String path = System.getenv("PATH");
        boolean denied = false;
        for (String dir : (path == null ? "/usr/local/bin:/usr/bin:/bin" : path).split(":", -1)) {
            Optional<String> problem = check(Path.of(dir.isEmpty() ? "." : dir).resolve(command));
            if (problem.isEmpty()) {
                return problem;
            }
            denied |= problem.get().equals(PERMISSION_DENIED);
        }
        return Optional.of(denied ? PERMISSION_DENIED : NOT_FOUND);
    }

    private static Optional<String> check(Path file) {
        if (!Files.exists(file)) {
            return Optional.of(NOT_FOUND);
        }
        if (Files.isDirectory(file) || !Files.isExecutable(file)) {
            return Optional.of(PERMISSION_DENIED);
        }
        return Optional.empty();
    }
}
