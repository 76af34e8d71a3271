package dev.kanuki.servlet;

import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;

/**
 * Chooses, for a request whose key is busy, to park work for the key's holder instead of refusing
 * the request: the application's opt-in to {@link dev.kanuki.ParkingLock parking} in a
 * {@link LockingFilter} ({@link LockingFilter.Builder#parkWhenBusy}). The filter then answers
 * {@code 202 Accepted} without running the request, and the work is applied by the
 * {@link dev.kanuki.ParkHandler} under the key's lock, by the request that holds it once that
 * request is finished (or by whichever process holds the lock next).
 */
@FunctionalInterface
public interface ParkingDecider {

    /**
     * Decides for one busy request. The request will not run when this returns work, so it may
     * read the request's body; everything the handler needs (the key, the form's fields) must be
     * in the bytes, since the handler may run in another process.
     *
     * @param request the request whose key's lock is held
     * @return the work to park, as bytes; null to answer the request as busy (409, or 503 after a wait)
     * @throws IOException when the request cannot be read; the filter passes it on
     */
    byte[] park(HttpServletRequest request) throws IOException;
}
