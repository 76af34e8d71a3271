package dev.kanuki.spring;

import dev.kanuki.LockProvider;
import dev.kanuki.LockStatus;
import dev.kanuki.spi.LockUri;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The health check of the lock store, shared by the health indicators of Spring Boot 3.5 and 4.0:
 * the store answers a status call for a probe name within a deadline. A call that hangs is left
 * to finish on its own thread; the check does not wait past the deadline.
 */
final class LockStoreProbe {
    /** The name whose status is asked for; nobody needs to hold it. */
    static final String PROBE_NAME = "kanuki-health-probe";

    private final LockProvider provider;
    private final Duration timeout;

    LockStoreProbe(LockProvider provider, Duration timeout) {
        this.provider = provider;
        this.timeout = timeout;
    }

    /**
     * The outcome of one check.
     *
     * @param up whether the store answered in time
     * @param details what to show: the store (without secrets), the time the answer took, or the error
     */
    record Result(boolean up, Map<String, Object> details) {
    }

    Result check() {
        Map<String, Object> details = new LinkedHashMap<>();
        details.put("store", store());
        long start = System.nanoTime();
        CompletableFuture<LockStatus> status = CompletableFuture.supplyAsync(() -> provider.status(PROBE_NAME), runnable -> {
            Thread t = new Thread(runnable, "kanuki-health");
            t.setDaemon(true);
            t.start();
        });
        try {
            status.get(timeout.toNanos(), TimeUnit.NANOSECONDS);
            details.put("answeredInMs", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
            return new Result(true, details);
        } catch (TimeoutException e) {
            details.put("error", "the lock store did not answer within " + timeout.toMillis() + " ms");
            return new Result(false, details);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            details.put("error", cause.getClass().getName() + ": " + cause.getMessage());
            return new Result(false, details);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            details.put("error", "interrupted");
            return new Result(false, details);
        }
    }

    private String store() {
        try {
            return LockUri.parse(provider.uri()).redacted();
        } catch (RuntimeException e) {
            return "(unreadable URI)";
        }
    }
}
