package dev.kanuki;

import dev.kanuki.spi.SafeNames;
import java.util.List;

/**
 * Several held locks, from {@link Locks#acquireAll}. Closing it releases all of them in the
 * reverse of the order they were taken.
 */
public final class LockSet implements AutoCloseable {
    private final List<LockHandle> handles;

    LockSet(List<LockHandle> handles) {
        this.handles = List.copyOf(handles);
    }

    /** {@return the handles, in the order they were taken} */
    public List<LockHandle> handles() {
        return handles;
    }

    /**
     * Gets the handle of one lock of the set.
     *
     * @param name a lock name
     * @return the handle of the lock with that name
     * @throws IllegalArgumentException when no lock of that name is in the set
     */
    public LockHandle get(String name) {
        for (LockHandle h : handles) {
            if (h.name().equals(name)) {
                return h;
            }
        }
        throw new IllegalArgumentException("no lock named '" + SafeNames.printable(name) + "' in this set");
    }

    /**
     * Verifies every lock in the set (see {@link LockHandle#verify()}).
     *
     * @throws LockLostException naming the first lock found lost
     */
    public void verify() {
        for (LockHandle h : handles) {
            h.verify();
        }
    }

    /** Releases every lock, last taken first. Idempotent. */
    @Override
    public void close() {
        RuntimeException failure = null;
        for (int i = handles.size() - 1; i >= 0; i--) {
            try {
                handles.get(i).close();
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
    }
}
