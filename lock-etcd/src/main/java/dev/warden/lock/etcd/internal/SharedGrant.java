package dev.warden.lock.etcd.internal;

import com.google.protobuf.ByteString;
import dev.warden.lock.spi.Grant;

/**
 * A granted share of a shared name: the entry's key, its create revision (the fencing token: revisions
 * rise in arrival order across the whole cluster, and the token floor, which only the migrating step
 * raises, is not added, since shared names are not offered there and a floor read at grant time could
 * put an earlier arrival's token above a later one's), its value (owner and attempt, compared on renewal
 * and release with the revision), the session whose lease carries it and when that lease was last
 * confirmed, and the slot its key came from. Immutable.
 */
record SharedGrant(String key, long createRevision, ByteString value, Session session, long leaseConfirmedSentAt,
                   SharedSlots.Slot slot) implements Grant {

    @Override
    public long fencingToken() {
        return createRevision;
    }

    /** As a lock's grant: the lease, which carries the entry, counts from its last confirmed keep-alive. */
    @Override
    public long validFromNanos(long pollSentAtNanos) {
        return leaseConfirmedSentAt - pollSentAtNanos < 0 ? leaseConfirmedSentAt : pollSentAtNanos;
    }
}
