package dev.kanuki.cli;

import dev.kanuki.spi.LockUri;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Optional;

/**
 * The directory of a {@code file:} or {@code sqlite:} backend, for the commands that only look
 * (status, prune, break): opening such a backend creates its directory, and a look at a mistyped
 * path must not leave one behind.
 */
final class LocalDirectory {
    private LocalDirectory() {
    }

    /**
     * @param backend a backend URI as given
     * @return the backend's directory when it is a {@code file:DIR} or {@code sqlite:DIR} that does
     *     not exist; empty for any other backend, or a URI that opening will report as wrong
     */
    static Optional<Path> missing(String backend) {
        LockUri uri;
        try {
            uri = LockUri.parse(backend);
        } catch (RuntimeException e) {
            return Optional.empty(); // opening it says what is wrong
        }
        if (!uri.scheme().equals("file") && !uri.scheme().equals("sqlite")) {
            return Optional.empty();
        }
        String body = uri.body().startsWith("//") ? uri.path() : uri.body();
        if (body.isEmpty()) {
            return Optional.empty(); // the default directory: the backend's own
        }
        Path dir = Path.of(body).toAbsolutePath().normalize();
        return Files.exists(dir, LinkOption.NOFOLLOW_LINKS) ? Optional.empty() : Optional.of(dir);
    }
}
