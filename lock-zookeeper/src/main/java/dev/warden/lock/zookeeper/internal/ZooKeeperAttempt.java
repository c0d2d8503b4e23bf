package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.spi.Grant;
import org.apache.zookeeper.Watcher;

import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * One contender: an ephemeral sequential node in the lock's queue, created (with Curator's
 * protection, so a create whose reply was lost is found again or deleted) as soon as the attempt
 * starts. A poll grants when the node is first in the queue and still exists; otherwise it notes
 * the node just ahead, and {@link #changed()} watches only that one, so a release wakes one waiter,
 * not the herd. {@link #abandon()} deletes the node, also when its create answers late. The polls,
 * the wait and the abandon are {@link QueuedAttempt}'s; this class keeps the queue's rule.
 *
 * <p>Concurrency: every field of its own is final; the poll and wait state ({@code ended},
 * {@code firstPoll}, the node ahead and {@code waiting}) is {@link QueuedAttempt}'s, guarded by
 * {@code this}; lock-api never runs two calls of one attempt at once, but watches and the driver's
 * interrupts arrive on other threads.
 */
final class ZooKeeperAttempt extends QueuedAttempt<String> {

    private final String floorPath;

    ZooKeeperAttempt(ZooKeeperDriver driver, String name, String lockPath, byte[] owner) {
        super(driver, "lock", name, lockPath, driver.nodes().create(lockPath, owner));
        this.floorPath = Paths.floorPath(lockPath);
    }

    /** The node just ahead in the queue, null when first. */
    @Override
    String ahead(List<String> children, String entry) {
        List<String> queue = Paths.queue(children);
        int at = queue.indexOf(entry);
        if (at < 0) {
            throw gone();
        }
        return at > 0 ? queuePath + "/" + queue.get(at - 1) : null;
    }

    /** The children and the namespace's token floor, in one request. */
    @Override
    CompletableFuture<Nodes.Listing> read() {
        return driver.nodes().childrenAndFloor(queuePath, floorPath);
    }

    @Override
    Grant handOver(ZooKeeperGrant node) {
        return node;
    }

    /** An exists watch on the node ahead: changed already when it is gone. */
    @Override
    CompletableFuture<Boolean> watch(String ahead, Watcher watcher) {
        return driver.calls().bounded("the watch on the node ahead in lock '" + name + "'",
                driver.nodes().watch(ahead, watcher).thenApply(Objects::isNull));
    }

    @Override
    public String toString() {
        return "ZooKeeperAttempt[" + queuePath + "]";
    }
}
