package dev.kanuki.file;

import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockBackendFactory;
import dev.kanuki.spi.LockUri;
import java.nio.file.Path;
import java.util.Set;

/**
 * Makes {@code file:} backends. {@code file:} alone is the per-user default directory;
 * {@code file:/abs/dir} and {@code file:relative/dir} name one. Option {@code strategy}: only
 * {@code os} (the default) for now.
 */
public final class FileLockBackendFactory implements LockBackendFactory {
    private static final Set<String> STRATEGIES = Set.of("os");

    /** Used by {@link java.util.ServiceLoader}. */
    public FileLockBackendFactory() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("file");
    }

    @Override
    public LockBackend create(LockUri uri) {
        uri.rejectUnknownOptions(Set.of("strategy"));
        String strategy = uri.param("strategy").orElse("os");
        if (!STRATEGIES.contains(strategy)) {
            throw new IllegalArgumentException("unknown file lock strategy '" + strategy + "' in '" + uri
                    + "'; known: " + String.join(", ", STRATEGIES));
        }
        String body = uri.body();
        if (body.startsWith("//")) {
            // file:///abs/dir (URL style): drop the empty authority
            if (!uri.authority().isEmpty() && !uri.authority().equals("localhost")) {
                throw new IllegalArgumentException("file URI '" + uri + "' names host '" + uri.authority()
                        + "'; file locks are local: write file:/path/to/dir");
            }
            body = uri.path();
        }
        boolean isDefault = body.isEmpty();
        Path dir = isDefault ? LockDirectory.defaultDirectory() : Path.of(body);
        return new OsLockBackend(LockDirectory.prepare(dir, isDefault));
    }
}
