package dev.warden.lock.internal;

import dev.warden.lock.spi.Grant;

/**
 * A grant of a lock the client keeps ({@link LeaseCache}): the server's hold behind it, the token of the
 * block it was lent with, and the acquisition it was lent to. Identity matters: the cache lends one at a
 * time per hold and compares by reference.
 */
final class LentGrant implements Grant {

    private final KeptHold entry;
    private final long token;
    private final String owner;
    /** When the server's clock for the hold last started (its grant or last renewal), when lent. */
    private final long confirmedAtNanos;

    LentGrant(KeptHold entry, long token, String owner) {
        this.entry = entry;
        this.token = token;
        this.owner = owner;
        this.confirmedAtNanos = entry.confirmedAtNanos;
    }

    KeptHold entry() {
        return entry;
    }

    String owner() {
        return owner;
    }

    @Override
    public long fencingToken() {
        return token;
    }

    /** A re-grant is valid from the hold's last confirmation, which is earlier than the (local) poll. */
    @Override
    public long validFromNanos(long pollSentAtNanos) {
        return confirmedAtNanos - pollSentAtNanos < 0 ? confirmedAtNanos : pollSentAtNanos;
    }

    @Override
    public String toString() {
        return "LentGrant[token " + token + " of " + entry.server + "]";
    }
}
