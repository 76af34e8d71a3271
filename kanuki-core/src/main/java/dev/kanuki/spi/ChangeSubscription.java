package dev.kanuki.spi;

/**
 * A registration made with {@link LockBackend#watchChanges}; cancelling it stops the calls.
 */
@FunctionalInterface
public interface ChangeSubscription {

    /** Stops notifications; idempotent, quick, never throws. */
    void cancel();
}
