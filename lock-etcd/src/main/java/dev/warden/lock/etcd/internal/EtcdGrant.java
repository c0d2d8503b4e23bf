package dev.warden.lock.etcd.internal;

import dev.warden.lock.spi.Grant;

/**
 * A granted lock: the holder's queue key, its create revision, the token floor the granting read saw
 * (the fencing token is their sum: both only rise from one holder to the next), the session
 * whose lease carries it, and when that lease was last confirmed: the send time of the session's
 * last confirmed keep-alive, taken after the read that granted the lock. The server keeps the lease
 * at least one TTL from then, and the key with it, so the grant needs no keep-alive of its own.
 */
record EtcdGrant(String key, long createRevision, String floorKey, long floor, Session session, long leaseConfirmedSentAt) implements Grant {

    @Override
    public long fencingToken() {
        return floor + createRevision;
    }

    @Override
    public long validFromNanos(long pollSentAtNanos) {
        return leaseConfirmedSentAt - pollSentAtNanos < 0 ? leaseConfirmedSentAt : pollSentAtNanos;
    }
}
