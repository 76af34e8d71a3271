package dev.kanuki.spi;

import java.util.OptionalLong;
import java.util.concurrent.locks.Lock;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A grant whose fencing token is issued on demand: with the acquisition when the backend chose
 * to (its holders of that name ask for tokens), else on the first {@link #fencingToken()} while
 * the lock is held, by {@link #issueToken()}, which also checks that the lock is still held.
 *
 * <p>Its state is guarded by {@link #stateLock()}: {@code fencingToken()} holds it while issuing,
 * and a backend's release and verify take it too (and call {@link #markReleased()} under it), so
 * a token is never issued while the grant is being released or checked.
 */
public abstract class TokenOnDemandGrant implements Grant {
    /**
     * Not the grant's monitor: issuing is a round trip to the server, and a virtual thread that
     * blocks inside {@code synchronized} pins its carrier thread on JDK 21 to 23.
     */
    private final ReentrantLock stateLock = new ReentrantLock();
    private final boolean issuedEagerly;
    /** Written once, before {@link #tokenIssued}; read without the lock by {@link #issuedToken()}. */
    private volatile long token;
    private volatile boolean tokenIssued;
    private boolean tokenAsked;
    private volatile boolean released;

    /**
     * Makes the grant of one acquisition.
     *
     * @param eagerToken the token issued with the acquisition, or empty when it is to be issued on demand
     */
    protected TokenOnDemandGrant(OptionalLong eagerToken) {
        this.issuedEagerly = eagerToken.isPresent();
        this.token = eagerToken.orElse(0);
        this.tokenIssued = issuedEagerly;
    }

    /**
     * The lock that guards this grant's state. A backend holds it around its release and verify
     * of the grant; {@link #fencingToken()} holds it while issuing.
     *
     * @return the grant's state lock
     */
    public final Lock stateLock() {
        return stateLock;
    }

    /**
     * Issues the token now, checking in the same step that the lock is still held. Called with
     * {@link #stateLock()} held, at most once.
     *
     * @return the token
     * @throws dev.kanuki.LockLostException when the lock is no longer held
     */
    protected abstract long issueToken();

    /** {@return the lock's name, for the message when the token is first asked for after release} */
    protected abstract String lockName();

    /** {@return the store, for the same message, e.g. {@code Redis}} */
    protected abstract String storeName();

    @Override
    public final long fencingToken() {
        stateLock.lock();
        try {
            tokenAsked = true;
            if (tokenIssued) {
                return token;
            }
            if (released) {
                throw new IllegalStateException("lock '" + SafeNames.printable(lockName())
                        + "' was released before its fencing token was asked for; on " + storeName()
                        + " tokens are issued on demand: call fencingToken() while holding the lock");
            }
            long issued = issueToken();
            token = issued;
            tokenIssued = true;
            return issued;
        } finally {
            stateLock.unlock();
        }
    }

    /** Never waits: a {@link #fencingToken()} may be on the network. */
    @Override
    public final OptionalLong issuedToken() {
        return tokenIssued ? OptionalLong.of(token) : OptionalLong.empty();
    }

    /** {@return true when the token came with the acquisition} */
    public final boolean issuedEagerly() {
        return issuedEagerly;
    }

    /** {@return true when the holder asked for the token; call it with {@link #stateLock()} held} */
    public final boolean tokenAsked() {
        return tokenAsked;
    }

    /**
     * {@return true once {@link #markReleased()} was called; exact under {@link #stateLock()}, a
     *     quick check without it}
     */
    public final boolean isReleased() {
        return released;
    }

    /** Records that the grant was released; call it with {@link #stateLock()} held. */
    public final void markReleased() {
        released = true;
    }
}
