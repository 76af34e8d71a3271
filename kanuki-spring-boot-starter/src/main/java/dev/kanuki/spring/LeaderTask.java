package dev.kanuki.spring;

import dev.kanuki.LeaderCandidate;

/**
 * Work that only the elected leader of several application instances runs. A bean that
 * implements it takes part in the election {@link #election()} on the application's
 * {@link dev.kanuki.LockProvider} from when the context has started until it stops: it is told
 * {@link #elected} when it becomes the leader (start the work, on a thread of your own, and return)
 * and {@link #revoked} when the term ends (stop it); after a lost lock it stands again. When the
 * context stops, a leader resigns ({@code revoked} with {@code RESIGNED} runs before the lock is
 * released, so the next leader starts after this one stopped). See {@code docs/leader.md} for the
 * election's guarantees and {@link dev.kanuki.Leadership#epoch()} for fencing a deposed leader.
 */
public interface LeaderTask extends LeaderCandidate {

    /**
     * {@return the election's name, shared by every instance; {@code kanuki.locked.prefix} is put before it}
     */
    String election();
}
