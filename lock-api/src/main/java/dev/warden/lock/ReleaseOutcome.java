package dev.warden.lock;

/** What releasing a lease did. Release never throws away the fact that the lease was lost. */
public enum ReleaseOutcome {
    /** The lock was removed from the server. */
    RELEASED,
    /** This hold was released but the same thread still holds the lock reentrantly. */
    STILL_HELD,
    /** This lease had been released before; nothing was done. */
    ALREADY_RELEASED,
    /** The lease had been lost (or the server no longer had it as ours); the current holder was not touched. */
    LOST
}
