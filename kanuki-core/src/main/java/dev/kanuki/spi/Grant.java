package dev.kanuki.spi;

/**
 * A backend's record of one successful acquisition: whatever it needs to renew, verify and
 * release it (an open channel, a connection, an owner id). The engine never looks inside
 * beyond these methods.
 */
public interface Grant {

    /** @return the fencing token issued for this acquisition */
    long fencingToken();
}
