package app;

import dev.kanuki.LockHandle;
import dev.kanuki.LockProvider;
import java.time.Duration;
import java.util.Comparator;
import java.util.Optional;

/**
 * Locks as a user's modular application would, with nothing but {@code requires dev.kanuki.core}.
 * For each backend URI argument: takes a lock, checks that a second provider cannot take it
 * meanwhile, releases it, and checks that the second provider then can. Prints a line per step and
 * the kanuki modules of the boot layer; any failure ends the program with an exception.
 */
public final class Main {
    private static final String NAME = "modular-smoke";
    private static final Duration WAIT = Duration.ofSeconds(30);

    private Main() {
    }

    public static void main(String[] args) {
        for (String uri : args) {
            String scheme = uri.substring(0, uri.indexOf(':'));
            try (LockProvider provider = LockProvider.open(uri); LockProvider other = LockProvider.open(uri)) {
                try (LockHandle handle = provider.lock(NAME).acquire(WAIT)) {
                    check(handle.isHeld(), scheme + ": the handle says it is not held");
                    check(other.lock(NAME).tryAcquire().isEmpty(), scheme + ": a second provider took the held lock");
                    System.out.println("acquired " + scheme);
                }
                Optional<LockHandle> next = other.lock(NAME).tryAcquire(WAIT);
                check(next.isPresent(), scheme + ": the lock was not free after its release");
                next.get().close();
                System.out.println("released " + scheme);
            }
        }
        ModuleLayer.boot().modules().stream()
                .filter(module -> module.getName().startsWith("dev.kanuki."))
                .sorted(Comparator.comparing(Module::getName))
                .forEach(module -> System.out.println("module " + module.getName() + " "
                        + (module.getDescriptor().isAutomatic() ? "automatic" : "explicit")));
    }

    private static void check(boolean condition, String failure) {
        if (!condition) {
            throw new IllegalStateException(failure);
        }
    }
}
