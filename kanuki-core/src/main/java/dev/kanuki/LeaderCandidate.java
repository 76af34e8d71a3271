package dev.kanuki;

/**
 * What a {@link LeaderElection} tells its candidate. Both methods run on the election's own
 * thread, one at a time, {@code elected} always before the matching {@code revoked}: start the
 * leader's work on a thread of your own in {@code elected} and stop it in {@code revoked}; do not
 * block in them (the election notices a loss only after {@code elected} returned).
 */
public interface LeaderCandidate {

    /**
     * This candidate became the leader.
     *
     * @param leadership the new term: its {@linkplain Leadership#epoch() epoch} is higher than
     *     every earlier leader's, on every backend; pass it to what the leader writes, so that a
     *     store can refuse a deposed leader's late writes (as with a lock's fencing token)
     */
    void elected(Leadership leadership);

    /**
     * This candidate is no longer the leader. Stop the leader's work. Unless the reason is
     * {@link Leadership.End#RESIGNED} or {@link Leadership.End#PROVIDER_CLOSED}, the candidate
     * then stands again.
     *
     * <p>For {@code RESIGNED} this runs before the lock is released, so another candidate
     * cannot be elected before it returns. For {@code LOST} and {@code PROVIDER_CLOSED} the lock
     * is already gone, and another leader may already be at work: this is why writes should
     * carry the epoch.
     *
     * @param leadership the term that ended
     * @param why why it ended
     */
    void revoked(Leadership leadership, Leadership.End why);
}
