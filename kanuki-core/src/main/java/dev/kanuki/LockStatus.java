package dev.kanuki;

import java.util.Optional;

/**
 * What a backend can tell about a lock without taking it.
 *
 * @param name the lock's name
 * @param state free, held (exclusively or shared), stale (owner gone or lease run out), or
 *     unknown when the backend cannot tell
 * @param owner the holder (or last holder, when free) if the backend records owners
 * @param lastFencingToken the last fencing token issued for the name, or -1 when unknown
 */
public record LockStatus(String name, State state, Optional<OwnerInfo> owner, long lastFencingToken) {

    /** Whether a lock is held. */
    public enum State {
        /** Nobody holds the lock. */
        FREE,
        /** Someone holds the lock exclusively. */
        HELD,
        /** One or more holders hold the lock in shared (read) mode. */
        HELD_SHARED,
        /**
         * An entry exists but its owner's lease ran out or its process is gone: the next
         * acquirer (or {@code kanuki break}) will remove it.
         */
        STALE,
        /** The backend cannot tell without taking the lock. */
        UNKNOWN
    }

    /** {@return true when the lock is held in any mode} */
    public boolean isHeld() {
        return state == State.HELD || state == State.HELD_SHARED;
    }
}
