package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.Share;
import org.apache.zookeeper.Watcher;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;

/**
 * One contender for a shared name: an ephemeral sequential entry under the name's parent
 * ({@link SharedQueue}), created with Curator's protection (a create whose reply was lost is found
 * again or deleted) as soon as the attempt starts. A poll lists the parent's children and applies the
 * grant rule; when the entry does not fit, it notes what {@link #changed()} is to watch: the nearest
 * entry ahead that alone keeps it out (an exists watch, so a writer's release wakes the one behind it,
 * not the herd), else the parent's children. {@link #abandon()} deletes the entry, also when its create
 * answers late. Request timeouts, session loss and closing behave as a lock's {@link ZooKeeperAttempt}:
 * both are {@link QueuedAttempt}s; this class keeps the grant rule and what to watch.
 *
 * <p>Concurrency: every field of its own is final; the poll and wait state ({@code ended},
 * {@code firstPoll}, the target to watch and {@code waiting}) is {@link QueuedAttempt}'s, guarded by
 * {@code this}; lock-api never runs two calls of one attempt at once, but watches and the driver's
 * interrupts arrive on other threads.
 */
final class SharedAttempt extends QueuedAttempt<SharedQueue.Verdict> {

    private final Share share;

    SharedAttempt(ZooKeeperDriver driver, String name, String parentPath, Share share, byte[] owner) {
        super(driver, "shared name", name, parentPath, driver.nodes().create(parentPath, SharedQueue.nodeName(share), owner));
        this.share = share;
    }

    /** What to wait for (a {@code WatchEntry} or {@code WatchChildren}), null when the entry fits. */
    @Override
    SharedQueue.Verdict ahead(List<String> children, String entry) {
        SharedQueue.Verdict verdict = SharedQueue.decide(children, entry, share);
        if (verdict instanceof SharedQueue.Gone) {
            throw gone();
        }
        return verdict instanceof SharedQueue.Granted ? null : verdict;
    }

    /** The children alone: the namespace's floor is raised for locks only, so a share's token is its entry's czxid. */
    @Override
    CompletableFuture<Nodes.Listing> read() {
        return driver.nodes().children(queuePath).thenApply(children -> new Nodes.Listing(children, 0));
    }

    @Override
    Grant handOver(ZooKeeperGrant node) {
        return new SharedGrant(node, share);
    }

    @Override
    CompletableFuture<Boolean> watch(SharedQueue.Verdict on, Watcher watcher) {
        CompletableFuture<Boolean> now;
        if (on instanceof SharedQueue.WatchEntry entry) {
            now = driver.nodes().watch(queuePath + "/" + entry.child(), watcher).thenApply(Objects::isNull);
        } else {
            // Set after the poll's listing: an entry ahead that left in between is a change already.
            List<String> ahead = ((SharedQueue.WatchChildren) on).ahead();
            now = driver.nodes().watchChildren(queuePath, watcher)
                    .thenApply(children -> children == null || !new HashSet<>(children).containsAll(ahead));
        }
        return driver.calls().bounded("the watch for a change ahead in shared name '" + name + "'", now);
    }

    @Override
    public String toString() {
        return "SharedAttempt[" + queuePath + ", " + share + "]";
    }
}
