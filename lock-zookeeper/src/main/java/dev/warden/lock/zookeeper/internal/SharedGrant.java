package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.Share;

/**
 * A granted share of a shared name: its entry node, held, renewed, released and cleaned up past its
 * horizon exactly as a lock's node ({@link ZooKeeperGrant}, with no token floor: the namespace's floor
 * is raised for locks only), plus the share it was granted. The fencing token is the entry's czxid:
 * distinct per entry, and higher than every entry's that arrived before it, whatever order they are
 * granted in. Immutable (the node grant keeps its own confirmation time).
 */
final class SharedGrant implements Grant {

    private final ZooKeeperGrant node;
    private final Share share;

    SharedGrant(ZooKeeperGrant node, Share share) {
        this.node = node;
        this.share = share;
    }

    /** The entry's node grant: what renew and release compare (its path, czxid and data version). */
    ZooKeeperGrant node() {
        return node;
    }

    @Override
    public long fencingToken() {
        return node.czxid();
    }

    @Override
    public String toString() {
        return "SharedGrant[" + node.path() + ", czxid " + node.czxid() + ", " + share + "]";
    }
}
