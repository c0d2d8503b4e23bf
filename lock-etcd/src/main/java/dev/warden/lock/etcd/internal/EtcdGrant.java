package dev.warden.lock.etcd.internal;

import dev.warden.lock.spi.Grant;

/**
 * A granted lock: the holder's queue key, its create revision (the fencing token) and the session
 * whose lease carries it.
 */
record EtcdGrant(String key, long createRevision, Session session) implements Grant {

    @Override
    public long fencingToken() {
        return createRevision;
    }
}
