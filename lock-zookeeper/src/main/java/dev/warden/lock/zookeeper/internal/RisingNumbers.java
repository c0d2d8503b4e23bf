package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.LockException;

import java.util.concurrent.CompletableFuture;

/**
 * The namespace's numbers that only rise: the token floor ({@code /<ns>/%floor}, raised by a holder in one
 * transaction guarded by its node) and the highest fencing epoch its clients used ({@code /<ns>/%epoch}).
 * Each is read, and unless high enough, written guarded by the version read; a client that moved it
 * first makes it read and try again. Stateless apart from its collaborator.
 */
final class RisingNumbers {

    /** Writes tried before giving up when other clients keep moving the number. */
    static final int TRIES = 10;

    private final Nodes nodes;

    RisingNumbers(Nodes nodes) {
        this.nodes = nodes;
    }

    /** True when every later token of the namespace exceeds {@code floor}; false when {@code g} is no longer held. */
    CompletableFuture<Boolean> raiseFloor(ZooKeeperGrant g, long floor) {
        if (floor < g.fencingToken()) {
            // Every later token is already above this one.
            return CompletableFuture.completedFuture(true);
        }
        return raiseFloor(g, Paths.floorPath(g.path().substring(0, g.path().lastIndexOf('/'))), floor, TRIES);
    }

    /**
     * Raises the namespace's floor itself to at least {@code value} while {@code g} holds (every later grant's
     * token is then above {@code value} plus its czxid); false when {@code g} is no longer held.
     */
    CompletableFuture<Boolean> raiseFloorValue(ZooKeeperGrant g, long value) {
        return raiseFloorValue(g, Paths.floorPath(g.path().substring(0, g.path().lastIndexOf('/'))), value, TRIES);
    }

    /**
     * A floor already high enough counts only while the grant holds (its node, seen after the floor read,
     * existed at that read: a czxid never comes back); for a grant that is gone it reserves nothing, since
     * another client may hold the lock with a token the raise was to stay below. A write is guarded by the
     * grant's node.
     */
    private CompletableFuture<Boolean> raiseFloorValue(ZooKeeperGrant g, String floorPath, long value, int tries) {
        return nodes.floorNode(floorPath).thenCompose(read -> {
            if (read.value() >= value) {
                return holds(g);
            }
            return nodes.writeFloor(g.path(), g.version(), floorPath, read, value).thenCompose(written -> written
                    ? CompletableFuture.completedFuture(true)
                    : holds(g).thenCompose(holds -> {
                        if (!holds) {
                            return CompletableFuture.completedFuture(false);
                        }
                        if (tries <= 1) {
                            throw movedTooOften("token floor " + floorPath);
                        }
                        return raiseFloorValue(g, floorPath, value, tries - 1);
                    }));
        });
    }

    private CompletableFuture<Boolean> holds(ZooKeeperGrant g) {
        return nodes.stat(g.path()).thenApply(stat -> stat != null && stat.getCzxid() == g.czxid());
    }

    private CompletableFuture<Boolean> raiseFloor(ZooKeeperGrant g, String floorPath, long floor, int tries) {
        return nodes.floorNode(floorPath).thenCompose(read -> read.value() >= floor ? CompletableFuture.completedFuture(true)
                : nodes.writeFloor(g.path(), g.version(), floorPath, read, floor).thenCompose(written -> written
                        ? CompletableFuture.completedFuture(true)
                        : nodes.stat(g.path()).thenCompose(stat -> {
                            if (stat == null || stat.getCzxid() != g.czxid()) {
                                return CompletableFuture.completedFuture(false);
                            }
                            if (tries <= 1) {
                                throw movedTooOften("token floor " + floorPath);
                            }
                            return raiseFloor(g, floorPath, floor, tries - 1);
                        })));
    }

    /** The epoch recorded at {@code path} before; records {@code epoch} when it is higher. */
    CompletableFuture<Integer> recordEpoch(String path, int epoch) {
        return recordEpoch(path, epoch, TRIES);
    }

    private CompletableFuture<Integer> recordEpoch(String path, int epoch, int tries) {
        return nodes.floorNode(path).thenCompose(read -> read.value() >= epoch ? CompletableFuture.completedFuture((int) read.value())
                : nodes.writeNumber(path, read, epoch).thenCompose(written -> {
                    if (written) {
                        return CompletableFuture.completedFuture((int) read.value());
                    }
                    if (tries <= 1) {
                        throw movedTooOften("fencing epoch " + path);
                    }
                    return recordEpoch(path, epoch, tries - 1);
                }));
    }

    private static LockException movedTooOften(String what) {
        return new LockException(LockException.Reason.UNAVAILABLE, "the " + what + " kept moving under " + TRIES + " writes");
    }
}
