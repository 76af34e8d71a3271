package dev.kanuki.spring;

import dev.kanuki.LockHandle;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.Optional;

/**
 * The lock of the {@link Locked @Locked} method running on this thread: its handle, for the
 * fencing token of a fenced write ({@code LockedContext.current().fencingToken()}) or a
 * {@code verify()} before committing.
 */
public final class LockedContext {
    /** Nested @Locked calls on one thread: the innermost on top. */
    private static final ThreadLocal<Deque<LockHandle>> HANDLES = ThreadLocal.withInitial(ArrayDeque::new);

    private LockedContext() {
    }

    /**
     * The handle of the innermost {@code @Locked} method running on this thread.
     *
     * @return the handle
     * @throws IllegalStateException when no {@code @Locked} method is running on this thread (a
     *     thread the method started has none: pass the handle to it)
     */
    public static LockHandle current() {
        LockHandle handle = HANDLES.get().peek();
        if (handle == null) {
            throw new IllegalStateException("no @Locked method is running on this thread ("
                    + Thread.currentThread().getName() + "); the handle is at hand only in the method's own thread");
        }
        return handle;
    }

    /** {@return the handle of the innermost {@code @Locked} method running on this thread, if any} */
    public static Optional<LockHandle> find() {
        return Optional.ofNullable(HANDLES.get().peek());
    }

    static void push(LockHandle handle) {
        HANDLES.get().push(handle);
    }

    static void pop() {
        Deque<LockHandle> handles = HANDLES.get();
        handles.pop();
        if (handles.isEmpty()) {
            HANDLES.remove(); // pooled threads keep no deque behind
        }
    }
}
