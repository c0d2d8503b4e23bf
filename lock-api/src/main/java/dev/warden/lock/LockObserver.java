package dev.warden.lock;

import java.time.Duration;

/**
 * Hooks for metrics, tracing and tests: told of every grant, renewal, release and loss of one
 * client's leases. Calls run on Warden's threads, synchronously, so an observer must be quick and
 * must not block; an exception it throws is logged and otherwise ignored.
 */
public interface LockObserver {

    /** A lock was granted after waiting {@code waited} (local queue included). */
    default void granted(String name, long fencingToken, Duration waited) {
    }

    /** A renewal is about to be sent. */
    default void renewing(String name, long fencingToken) {
    }

    /** A renewal was confirmed; the lease is valid for {@code remaining} more. */
    default void renewed(String name, long fencingToken, Duration remaining) {
    }

    /** The last hold is being released; from here on the holder no longer relies on the lock. */
    default void releasing(String name, long fencingToken) {
    }

    /** A release finished. */
    default void released(String name, long fencingToken, ReleaseOutcome outcome) {
    }

    /** A lease was lost. */
    default void lost(LeaseLost event) {
    }

    /** This client force-released a hold ({@link LockAdmin#forceRelease}): the audit's event. */
    default void forceReleased(String name, long fencingToken, String operator, String why) {
    }

    /** An observer that ignores everything. */
    LockObserver NONE = new LockObserver() {
    };
}
