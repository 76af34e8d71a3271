package dev.kanuki.cli;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/**
 * Lets {@code sqlite:} load SQLite's native library from one copy per user and driver version,
 * in {@code ~/.cache/kanuki/sqlite-VERSION/} ({@code $XDG_CACHE_HOME} when set), instead of the
 * driver's default: a fresh copy in the temporary directory on every start, which costs a short
 * command about 200 ms and leaves files in {@code /tmp}. The copy is made once, atomically (a
 * temporary file renamed into place), so concurrent first runs are safe.
 */
final class SqliteNative {
    private static final String PATH_PROPERTY = "org.sqlite.lib.path";
    private static final String NAME_PROPERTY = "org.sqlite.lib.name";

    private SqliteNative() {
    }

    /**
     * Points the SQLite driver at the cached library when the URI is a {@code sqlite:} one,
     * extracting it on first use. Does nothing when the user chose a library path already, or
     * when the library cannot be cached (the driver then does as it always does).
     *
     * @param backendUri the backend about to be opened
     */
    static void prepareFor(String backendUri) {
        if (!backendUri.regionMatches(true, 0, "sqlite:", 0, "sqlite:".length())
                || System.getProperty(PATH_PROPERTY) != null) {
            return;
        }
        try {
            String folder = org.sqlite.util.OSInfo.getNativeLibFolderPathForCurrentOS();
            String name = System.mapLibraryName("sqlitejdbc");
            String resource = "/org/sqlite/native/" + folder + "/" + name;
            String version = org.sqlite.SQLiteJDBCLoader.getVersion();
            Path dir = cacheHome().resolve("sqlite-" + version).resolve(folder);
            Path library = dir.resolve(name);
            if (!Files.isRegularFile(library)) {
                extract(resource, dir, library);
            }
            System.setProperty(PATH_PROPERTY, dir.toString());
            System.setProperty(NAME_PROPERTY, name);
        } catch (IOException | RuntimeException | LinkageError e) {
            // The driver's own extraction still works; only slower.
        }
    }

    private static void extract(String resource, Path dir, Path library) throws IOException {
        try (InputStream in = org.sqlite.SQLiteJDBCLoader.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new IOException("no " + resource + " in the SQLite driver");
            }
            Files.createDirectories(dir);
            Path temp = Files.createTempFile(dir, library.getFileName().toString(), ".tmp");
            try {
                Files.copy(in, temp, StandardCopyOption.REPLACE_EXISTING);
                Files.move(temp, library, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
            } finally {
                Files.deleteIfExists(temp);
            }
        }
    }

    /** @return {@code $XDG_CACHE_HOME/kanuki}, else {@code ~/.cache/kanuki} */
    static Path cacheHome() {
        String xdg = System.getenv("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isBlank() && Path.of(xdg).isAbsolute()) {
            return Path.of(xdg, "kanuki");
        }
        return Path.of(System.getProperty("user.home"), ".cache", "kanuki");
    }
}
