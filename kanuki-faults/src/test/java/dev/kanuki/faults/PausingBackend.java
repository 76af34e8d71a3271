package dev.kanuki.faults;

import dev.kanuki.Capabilities;
import dev.kanuki.LockStatus;
import dev.kanuki.spi.ChangeSubscription;
import dev.kanuki.spi.Grant;
import dev.kanuki.spi.LockBackend;
import dev.kanuki.spi.LockBackendFactory;
import dev.kanuki.spi.LockRequest;
import dev.kanuki.spi.LockUri;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.ServiceLoader;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A worker's real backend with one pause point: the first time the worker reaches {@link Phase}
 * once the referee has armed it (the file {@code GO.armed} exists), it says {@code PAUSED <phase>} and waits until the referee has stopped it (SIGSTOP), let it go
 * (SIGCONT) and created the go file. The pause sits where a GC pause hurts most: an acquisition
 * the backend has just granted but the engine has not yet seen, a renewal (or a session's check)
 * about to be sent, a release about to be sent. Everything else passes straight through.
 */
final class PausingBackend implements LockBackend {
    /** Where the worker pauses. */
    enum Phase {
        /** after the backend granted the lock, before the engine hands it out */
        ACQUIRE,
        /** before the first renewal (ttl) or check (session) after the lock was taken */
        RENEW,
        /** before the release is sent */
        RELEASE
    }

    private final LockBackend real;
    private final Phase phase;
    private final Path go;
    private final Path armed;
    private final AtomicBoolean paused = new AtomicBoolean();
    private volatile boolean granted;

    private PausingBackend(LockBackend real, Phase phase, Path go) {
        this.real = real;
        this.phase = phase;
        this.go = go;
        this.armed = go.resolveSibling(go.getFileName() + ".armed");
    }

    /** @return the backend {@code uri} names (found as {@link dev.kanuki.LockProvider#open} finds it), pausing at {@code phase} */
    static LockBackend wrap(String uri, Phase phase, Path go) {
        LockUri parsed = LockUri.parse(uri);
        for (LockBackendFactory factory : ServiceLoader.load(LockBackendFactory.class)) {
            if (factory.schemes().contains(parsed.scheme())) {
                return new PausingBackend(factory.create(parsed), phase, go);
            }
        }
        throw new IllegalArgumentException("no backend for " + parsed.scheme());
    }

    private void pauseAt(Phase here) {
        if (here != phase || !Files.exists(armed) || !paused.compareAndSet(false, true)) {
            return;
        }
        FaultWorker.say("PAUSED " + here.name().toLowerCase(java.util.Locale.ROOT));
        // The referee stops this JVM when it reads the line; the go file is made after SIGCONT.
        long giveUp = System.nanoTime() + Duration.ofMinutes(3).toNanos();
        while (!Files.exists(go) && System.nanoTime() < giveUp) {
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private Optional<Grant> granted(Optional<Grant> grant) {
        if (grant.isPresent()) {
            granted = true;
            pauseAt(Phase.ACQUIRE);
        }
        return grant;
    }

    @Override
    public Capabilities capabilities() {
        return real.capabilities();
    }

    @Override
    public String scope() {
        return real.scope();
    }

    @Override
    public Optional<Grant> tryAcquire(LockRequest request) {
        return granted(real.tryAcquire(request));
    }

    @Override
    public Optional<Grant> awaitAcquire(LockRequest request, Duration maxWait) throws InterruptedException {
        return granted(real.awaitAcquire(request, maxWait));
    }

    @Override
    public boolean blockingWait() {
        return real.blockingWait();
    }

    @Override
    public ChangeSubscription watchChanges(LockRequest request, Runnable onChange) {
        return real.watchChanges(request, onChange);
    }

    @Override
    public void abandon(LockRequest request) {
        real.abandon(request);
    }

    @Override
    public boolean tryBeforeWait() {
        return real.tryBeforeWait();
    }

    @Override
    public void release(Grant grant) {
        pauseAt(Phase.RELEASE);
        real.release(grant);
    }

    @Override
    public boolean renew(Grant grant, Duration lease) {
        if (granted) {
            pauseAt(Phase.RENEW);
        }
        return real.renew(grant, lease);
    }

    @Override
    public boolean verify(Grant grant) {
        if (granted) {
            pauseAt(Phase.RENEW);
        }
        return real.verify(grant);
    }

    @Override
    public LockStatus status(String name) {
        return real.status(name);
    }

    @Override
    public List<LockStatus> list() {
        return real.list();
    }

    @Override
    public LockStatus breakLock(String name, boolean force) {
        return real.breakLock(name, force);
    }

    @Override
    public List<String> prune(boolean dryRun) {
        return real.prune(dryRun);
    }

    @Override
    public void close() {
        real.close();
    }
}
