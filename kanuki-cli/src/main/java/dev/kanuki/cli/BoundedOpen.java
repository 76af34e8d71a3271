package dev.kanuki.cli;

import dev.kanuki.LockBackendException;
import dev.kanuki.LockProvider;
import dev.kanuki.spi.Durations;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Opens a provider within the wait a command was given ({@code run -w}). Opening connects, and a
 * backend bounds that by its own {@code timeout} option (5 s by default): on a server that accepts
 * connections but cannot answer (no quorum, paused) a {@code -w 3s} would otherwise take the
 * whole connect timeout before its wait even starts.
 */
final class BoundedOpen {
    /** The least an open is given, so that a short wait on a loaded machine still connects. */
    private static final Duration MIN_OPEN = Duration.ofSeconds(1);

    private BoundedOpen() {
    }

    /** @return the URI without its password, for a message */
    private static String describe(String uri) {
        try {
            return dev.kanuki.spi.LockUri.parse(uri).redacted();
        } catch (RuntimeException e) {
            return "the backend"; // opening reports a URI it cannot parse itself, in its own words
        }
    }

    /**
     * @param uri the backend URI
     * @param wait how long the command may wait in all, or null for no bound but the backend's own
     * @return the open provider
     * @throws LockBackendException when opening fails, or does not finish within the wait
     */
    static LockProvider open(String uri, Duration wait) {
        if (wait == null) {
            return LockProvider.open(uri);
        }
        Duration bound = wait.compareTo(MIN_OPEN) < 0 ? MIN_OPEN : wait;
        // A daemon thread of the common pool: one that is still connecting never keeps the JVM alive.
        CompletableFuture<LockProvider> opening = CompletableFuture.supplyAsync(() -> LockProvider.open(uri));
        try {
            return opening.get(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            opening.thenAccept(LockProvider::close); // opened too late: nobody uses it
            throw new LockBackendException(describe(uri) + " did not answer within " + Durations.format(bound)
                    + " (-w) while connecting", "check that its server runs, is reachable and has a quorum", null);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof RuntimeException runtime) {
                throw runtime;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw new IllegalStateException(cause);
        } catch (InterruptedException e) {
            opening.thenAccept(LockProvider::close);
            Thread.currentThread().interrupt();
            throw new LockBackendException("interrupted while connecting to the backend", null, e);
        }
    }
}
