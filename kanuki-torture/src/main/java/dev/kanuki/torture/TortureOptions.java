package dev.kanuki.torture;

import dev.kanuki.LockNames;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Objects;

/**
 * What a {@link Torture} run does: how many processes increment a shared counter file how many
 * times, under which lock.
 *
 * @param backendUri the backend whose lock guards each increment, e.g. {@code file:/tmp/locks};
 *     {@code null} to take no lock at all (which must lose updates)
 * @param lockName the lock's name (see {@link LockNames})
 * @param processes how many worker processes run at once, at least 1
 * @param iterations how many increments each worker makes, at least 1
 * @param workDir where the counter file, the overlap log and the workers' files go; created
 *     when missing, and the counter and log in it are reset
 * @param holdTime the pause between reading and writing the counter, to widen the race
 *     window; zero for none
 * @param acquireTimeout how long a worker waits for the lock at each iteration before it gives
 *     up and fails
 */
public record TortureOptions(String backendUri, String lockName, int processes, int iterations, Path workDir,
                             Duration holdTime, Duration acquireTimeout) {

    /**
     * Checks the options.
     *
     * @param backendUri the backend whose lock guards each increment; {@code null} for no lock
     * @param lockName the lock's name
     * @param processes how many worker processes run at once, at least 1
     * @param iterations how many increments each worker makes, at least 1
     * @param workDir where the counter file, the overlap log and the workers' files go
     * @param holdTime the pause between reading and writing the counter; zero for none
     * @param acquireTimeout how long a worker waits for the lock at each iteration
     * @throws IllegalArgumentException when a count is below 1, a duration is negative, or the
     *     lock name breaks the rules
     * @throws NullPointerException when a field other than {@code backendUri} is null
     */
    public TortureOptions {
        Objects.requireNonNull(lockName, "lockName");
        Objects.requireNonNull(workDir, "workDir");
        Objects.requireNonNull(holdTime, "holdTime");
        Objects.requireNonNull(acquireTimeout, "acquireTimeout");
        lockName = LockNames.validate(lockName);
        if (processes < 1) {
            throw new IllegalArgumentException("torture needs at least 1 process, got " + processes);
        }
        if (iterations < 1) {
            throw new IllegalArgumentException("torture needs at least 1 iteration, got " + iterations);
        }
        if (holdTime.isNegative()) {
            throw new IllegalArgumentException("hold time is negative: " + holdTime);
        }
        if (acquireTimeout.isNegative()) {
            throw new IllegalArgumentException("acquire timeout is negative: " + acquireTimeout);
        }
    }

    /** {@return true when the run takes a lock ({@link #backendUri()} is not null)} */
    public boolean locking() {
        return backendUri != null;
    }
}
