package dev.kanuki.torture;

import java.time.Duration;
import java.util.List;
import java.util.Objects;

/**
 * What a {@link Torture} run observed.
 *
 * @param expected the counter value if no update was lost: processes × iterations
 * @param actual the counter value the workers left in the counter file
 * @param lostUpdates {@code expected - actual}
 * @param overlaps how many times a worker entered the critical section while another was inside
 * @param fencingViolations how many acquisitions got a fencing token not strictly greater than
 *     the acquisition logged before them; always 0 when no lock is taken
 * @param elapsed from the start signal to the exit of the last worker
 * @param acquisitionsPerSecond critical sections entered per second over {@code elapsed}
 * @param p50Nanos the median time to acquire the lock
 * @param p99Nanos the 99th percentile time to acquire the lock
 * @param maxNanos the longest time to acquire the lock
 * @param workerErrors one entry per worker that failed or was stopped, with the tail of its
 *     standard error; empty when every worker finished cleanly
 */
public record TortureResult(long expected, long actual, long lostUpdates, long overlaps, long fencingViolations,
                            Duration elapsed, double acquisitionsPerSecond, long p50Nanos, long p99Nanos,
                            long maxNanos, List<String> workerErrors) {

    /**
     * Copies the error list, and checks that {@code elapsed} and the list are not null.
     *
     * @param expected the counter value if no update was lost
     * @param actual the counter value the workers left
     * @param lostUpdates {@code expected - actual}
     * @param overlaps how many times a worker entered while another was inside
     * @param fencingViolations how many acquisitions got a token not above the one logged before
     * @param elapsed from the start signal to the exit of the last worker
     * @param acquisitionsPerSecond critical sections entered per second over {@code elapsed}
     * @param p50Nanos the median time to acquire the lock
     * @param p99Nanos the 99th percentile time to acquire the lock
     * @param maxNanos the longest time to acquire the lock
     * @param workerErrors one entry per worker that failed or was stopped
     */
    public TortureResult {
        Objects.requireNonNull(elapsed, "elapsed");
        workerErrors = List.copyOf(workerErrors);
    }

    /**
     * {@return true when no update was lost, nobody overlapped, fencing tokens only grew and every
     *     worker finished cleanly}
     */
    public boolean passed() {
        return actual == expected && overlaps == 0 && fencingViolations == 0 && workerErrors.isEmpty();
    }
}
