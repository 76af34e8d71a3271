package dev.kanuki.file;

import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockBackendFactory;
import dev.kanuki.spi.LockUri;
import java.nio.file.Path;
import java.util.Set;

/**
 * Makes {@code file:} backends. {@code file:} alone is the per-user default directory;
 * {@code file:/abs/dir} and {@code file:relative/dir} name one. Option {@code strategy}:
 * {@code os} (the default: kernel locks), or the ttl strategies {@code mkdir}, {@code symlink},
 * {@code rename}, {@code create}, {@code queue} (see {@code docs/backends/file.md}). Option
 * {@code shared=group} accepts a directory its group may write (see {@link DirectoryTrust}).
 */
public final class FileLockBackendFactory implements LockBackendFactory {
    private static final Set<String> STRATEGIES = Set.of("os", "mkdir", "symlink", "rename", "create", "queue");

    /** {@return the strategies {@code strategy=} accepts} */
    static Set<String> strategies() {
        return STRATEGIES;
    }

    /** Used by {@link java.util.ServiceLoader}. */
    public FileLockBackendFactory() {
    }

    @Override
    public Set<String> schemes() {
        return Set.of("file");
    }

    @Override
    public LockBackend create(LockUri uri) {
        uri.rejectUnknownOptions(Set.of("strategy", "shared"));
        String shared = uri.param("shared").orElse("");
        if (!shared.isEmpty() && !shared.equals("group")) {
            throw new IllegalArgumentException("unknown value shared=" + shared + " in '" + uri
                    + "'; known: shared=group (trust the lock directory's group, see docs/backends/file.md)");
        }
        String strategy = uri.param("strategy").orElse("os");
        boolean keepStale = uri.param("keepStale").map("true"::equals).orElse(false);
        if (!STRATEGIES.contains(strategy)) {
            throw new IllegalArgumentException("unknown file lock strategy '" + strategy + "' in '" + uri
                    + "'; known: " + String.join(", ", new java.util.TreeSet<>(STRATEGIES)));
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
        Path prepared = LockDirectory.prepare(dir, isDefault, shared.equals("group"));
        return switch (strategy) {
            case "os" -> new OsLockBackend(prepared);
            case "mkdir" -> new TtlFileLockBackend(prepared, new MkdirStrategy(), keepStale);
            case "symlink" -> new TtlFileLockBackend(prepared, new SymlinkStrategy(), keepStale);
            case "rename" -> new TtlFileLockBackend(prepared, new RenameStrategy(), keepStale);
            case "create" -> new TtlFileLockBackend(prepared, new CreateStrategy(), keepStale);
            case "queue" -> new QueueLockBackend(prepared);
            default -> throw new IllegalStateException(strategy);
        };
    }
}
