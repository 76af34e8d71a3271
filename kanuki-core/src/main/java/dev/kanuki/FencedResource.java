package dev.kanuki;

import java.util.Objects;
import java.util.Optional;

/**
 * A resource that checks fencing tokens itself, so that a holder whose lock was lost (paused past
 * its lease, broken) cannot overwrite what a newer holder wrote: a write carries the writer's
 * {@link LockHandle#fencingToken()} and is stored only if the token is above every token the
 * resource has accepted; otherwise it is refused with a {@link FencedWriteRefusedException}.
 * Checking {@link LockHandle#verify()} and then writing is not enough: the writer can be paused
 * between the two.
 *
 * <p>Implementations must make the comparison and the store one atomic step of the resource
 * (a conditional {@code UPDATE ... WHERE fence < ?}, a compare-and-set, an HTTP {@code If-Match}
 * on a version derived from the token). {@link #over(String, CompareAndStore, java.util.function.Supplier)}
 * builds one from such a step; {@code kanuki-jdbc}'s {@code JdbcFencedResource} is one for a
 * table row; {@link LockedFile} does the same for a file.
 *
 * @param <T> what is stored
 */
public interface FencedResource<T> {

    /**
     * Stores {@code value} as written by the holder of {@code token}.
     *
     * @param token the writer's fencing token
     * @param value what to store
     * @throws FencedWriteRefusedException when the resource has accepted a token at least as high
     */
    void write(long token, T value);

    /**
     * Stores {@code value} as written by {@code holder}.
     *
     * @param holder the writer's handle; its fencing token goes with the write
     * @param value what to store
     * @throws FencedWriteRefusedException when the resource has accepted a token at least as high
     */
    default void write(LockHandle holder, T value) {
        write(holder.fencingToken(), value);
    }

    /** {@return the stored value and the token that wrote it; empty before the first write} */
    Optional<Fenced<T>> read();

    /**
     * A stored value and the fencing token of its writer.
     *
     * @param token the writer's fencing token
     * @param value the value
     * @param <T> what is stored
     */
    record Fenced<T>(long token, T value) {
    }

    /**
     * The one atomic step of a store that can compare tokens: "if every token stored so far is
     * below {@code token}, store {@code value} with it".
     *
     * @param <T> what is stored
     */
    @FunctionalInterface
    interface CompareAndStore<T> {
        /**
         * Stores a value unless a writer with a token at least as high stored one before.
         *
         * @param token the writer's fencing token
         * @param value what to store
         * @return true when stored; false when a token at least as high was stored before
         * @throws Exception when the store fails (it is wrapped in a {@link LockBackendException})
         */
        boolean storeIfNewer(long token, T value) throws Exception;
    }

    /**
     * Builds a resource from a store's compare-and-store step and its read.
     *
     * @param name what the resource is, for messages
     * @param store the atomic compare-and-store
     * @param reader reads the stored value and its token
     * @param <T> what is stored
     * @return the resource
     */
    static <T> FencedResource<T> over(String name, CompareAndStore<T> store,
                                      java.util.function.Supplier<Optional<Fenced<T>>> reader) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(store, "store");
        Objects.requireNonNull(reader, "reader");
        return new FencedResource<>() {
            @Override
            public void write(long token, T value) {
                boolean stored;
                try {
                    stored = store.storeIfNewer(token, value);
                } catch (RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new LockBackendException("cannot write " + name + ": " + e, "check the store", e);
                }
                if (!stored) {
                    throw new FencedWriteRefusedException(name, token, read().map(Fenced::token).orElse(-1L));
                }
            }

            @Override
            public Optional<Fenced<T>> read() {
                return reader.get();
            }

            @Override
            public String toString() {
                return name;
            }
        };
    }

    /**
     * A resource in this JVM's memory, for tests and as the reference behaviour.
     *
     * @param name what the resource is, for messages
     * @param <T> what is stored
     * @return an empty resource
     */
    static <T> FencedResource<T> inMemory(String name) {
        Object guard = new Object();
        @SuppressWarnings("unchecked")
        Fenced<T>[] current = new Fenced[1];
        return over(name, (token, value) -> {
            synchronized (guard) {
                if (current[0] != null && current[0].token() >= token) {
                    return false;
                }
                current[0] = new Fenced<>(token, value);
                return true;
            }
        }, () -> {
            synchronized (guard) {
                return Optional.ofNullable(current[0]);
            }
        });
    }
}
