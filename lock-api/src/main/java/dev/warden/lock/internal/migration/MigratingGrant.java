package dev.warden.lock.internal.migration;

import dev.warden.lock.spi.Grant;

/**
 * Both grants of a migrating acquisition. Its token is the larger of the two, already made the floor
 * of the other backend; it is valid from the earlier of the two backends' clocks.
 *
 * @param from the grant on the backend being left, taken first
 * @param to the grant on the backend being moved to
 * @param fromValidFromNanos when the {@code from} grant's server clock started (its granting poll or
 *        its last confirmed renewal while the acquisition waited for {@code to})
 */
record MigratingGrant(Grant from, Grant to, long fromValidFromNanos) implements Grant {

    @Override
    public long fencingToken() {
        return Math.max(from.fencingToken(), to.fencingToken());
    }

    @Override
    public long validFromNanos(long pollSentAtNanos) {
        long toValidFrom = to.validFromNanos(pollSentAtNanos);
        return fromValidFromNanos - toValidFrom < 0 ? fromValidFromNanos : toValidFrom;
    }

    @Override
    public String toString() {
        return "MigratingGrant[from=" + from + ", to=" + to + "]";
    }
}
