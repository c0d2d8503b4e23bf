package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.spi.Grant;

import java.util.concurrent.ScheduledFuture;

/**
 * A granted lock: the contender's node, its {@code czxid} (the zxid of the transaction that created
 * it, which increases across the whole ensemble and, unlike the sequence suffix, does not restart
 * when an empty parent is cleaned up), the namespace's token floor read right behind the granting
 * queue read (the fencing token is floor plus czxid: neither falls from one holder to the next), its data version (never changed
 * after the create; release deletes with it), and the connection epoch it was granted in.
 *
 * <p>Concurrency: {@code confirmedAtNanos} is volatile (written on ZooKeeper's event thread, read by the
 * keeper); {@code cleanup} is guarded by {@code this}.
 */
final class ZooKeeperGrant implements Grant {

    private final String path;
    private final long czxid;
    /** The namespace's token floor as read right after the granting queue read. */
    private final long floor;
    private final int version;
    private final long epoch;
    /** When the last poll or renewal that confirmed this grant was sent (System.nanoTime). */
    private volatile long confirmedAtNanos;
    private ScheduledFuture<?> cleanup;

    ZooKeeperGrant(String path, long czxid, long floor, int version, long epoch, long confirmedAtNanos) {
        this.path = path;
        this.czxid = czxid;
        this.floor = floor;
        this.version = version;
        this.epoch = epoch;
        this.confirmedAtNanos = confirmedAtNanos;
    }

    /** The node behind a lock's or a shared name's grant: both are renewed and released alike. */
    static ZooKeeperGrant held(Grant grant) {
        return grant instanceof SharedGrant s ? s.node() : of(grant);
    }

    /** A lock's grant; a shared name's is refused (evictions and token floors cover locks only). */
    static ZooKeeperGrant of(Grant grant) {
        if (grant instanceof ZooKeeperGrant g) {
            return g;
        }
        if (grant instanceof SharedGrant) {
            throw new IllegalArgumentException("evictions and token floors cover locks, not shared names: " + grant);
        }
        throw new IllegalArgumentException("not a ZooKeeper grant: " + grant);
    }

    @Override
    public long fencingToken() {
        return floor + czxid;
    }

    String path() {
        return path;
    }

    long czxid() {
        return czxid;
    }

    /** The namespace's token floor the grant read. */
    long floor() {
        return floor;
    }

    int version() {
        return version;
    }

    long epoch() {
        return epoch;
    }

    long confirmedAtNanos() {
        return confirmedAtNanos;
    }

    void confirmed(long sentAtNanos) {
        if (sentAtNanos - confirmedAtNanos > 0) {
            confirmedAtNanos = sentAtNanos;
        }
    }

    synchronized void cleanup(ScheduledFuture<?> task) {
        cleanup = task;
    }

    synchronized void cancelCleanup() {
        if (cleanup != null) {
            cleanup.cancel(false);
            cleanup = null;
        }
    }

    @Override
    public String toString() {
        return "ZooKeeperGrant[" + path + ", czxid " + czxid + "]";
    }
}
