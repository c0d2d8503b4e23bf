package dev.warden.lock;

/**
 * Told when a candidate starts and stops leading, in that order for each term, on Warden's event
 * thread (one thread per client: keep the callbacks short, hand work to your own executor).
 */
public interface LeadershipListener {

    /**
     * This candidate leads from now on. The term is {@code leadership.fencingToken()}; act as leader
     * while {@code leadership.isValid()}.
     */
    void elected(Lease leadership);

    /**
     * This candidate stopped leading in {@code term}: its lease was lost, it resigned, or it left.
     *
     * @param lost the loss when {@code why} is {@link StepDown#LOST}, else null
     */
    void stepped(long term, StepDown why, LeaseLost lost);
}
