package dev.kanuki.engine;

import dev.kanuki.Capabilities;
import dev.kanuki.LeaseKind;
import dev.kanuki.LockStatus;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import java.util.Optional;

/**
 * The parts of an engine test's backend that do nothing: no resources, releases that need no
 * work, grants that stay held, a status that cannot tell. A test overrides what it examines.
 */
abstract class FakeBackend implements LockBackend {
    private final LeaseKind leaseKind;

    FakeBackend(LeaseKind leaseKind) {
        this.leaseKind = leaseKind;
    }

    @Override
    public Capabilities capabilities() {
        return Capabilities.builder(leaseKind).build();
    }

    @Override
    public String scope() {
        return getClass().getSimpleName() + ":" + System.identityHashCode(this);
    }

    @Override
    public void release(Grant grant) {
    }

    @Override
    public boolean renew(Grant grant, java.time.Duration lease) {
        return true;
    }

    @Override
    public boolean verify(Grant grant) {
        return true;
    }

    @Override
    public LockStatus status(String name) {
        return new LockStatus(name, LockStatus.State.UNKNOWN, Optional.empty(), -1);
    }

    @Override
    public void close() {
    }
}
