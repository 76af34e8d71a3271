package dev.kanuki.spi;

import java.util.OptionalLong;

/**
 * A backend's record of one successful acquisition: whatever it needs to renew, verify and
 * release it (an open channel, a connection, an owner id). The engine never looks inside
 * beyond these methods.
 */
public interface Grant {

    /**
     * The fencing token of this acquisition. Most backends issue it while acquiring; a backend
     * whose tokens cost a write of their own that the bare acquisition does not need (the
     * database servers, Redis, memcached) may issue it on the first call instead, checking in the
     * same step that the lock is still held, and returns the same number afterwards.
     *
     * @return the fencing token issued for this acquisition
     * @throws dev.kanuki.LockLostException when a token issued on demand finds the lock lost
     * @throws IllegalStateException when a token issued on demand is first asked for after release
     */
    long fencingToken();

    /**
     * {@return the fencing token if it has been issued already, without asking the backend (for
     *     messages and {@code toString})}
     */
    default OptionalLong issuedToken() {
        return OptionalLong.of(fencingToken());
    }
}
