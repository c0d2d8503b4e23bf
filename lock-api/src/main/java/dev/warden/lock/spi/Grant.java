package dev.warden.lock.spi;

/** A backend's record of one granted lock; drivers carry whatever they need to renew and release it. */
public interface Grant {

    /** The fencing token of this grant, strictly increasing per lock name across clients. */
    long fencingToken();

    /**
     * When the server's clock for this grant started, on {@link System#nanoTime()} (the monotonic
     * clock lock-api reads in production): lock-api counts the TTL from here. By default the send
     * time of the poll that granted it; a backend whose
     * grants live on a session (etcd lease, ZooKeeper session) returns the send time of the
     * session's last confirmed keep-alive when that is earlier, so a grant needs no keep-alive of
     * its own.
     *
     * @param pollSentAtNanos when the granting poll was sent
     */
    default long validFromNanos(long pollSentAtNanos) {
        return pollSentAtNanos;
    }
}
