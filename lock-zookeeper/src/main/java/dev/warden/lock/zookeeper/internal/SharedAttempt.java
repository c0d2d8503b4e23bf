package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import dev.warden.lock.spi.Share;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One contender for a shared name: an ephemeral sequential entry under the name's parent
 * ({@link SharedQueue}), created with Curator's protection (a create whose reply was lost is found
 * again or deleted) as soon as the attempt starts. A poll lists the parent's children and applies the
 * grant rule; when the entry does not fit, it notes what {@link #changed()} is to watch: the nearest
 * entry ahead that alone keeps it out (an exists watch, so a writer's release wakes the one behind it,
 * not the herd), else the parent's children. {@link #abandon()} deletes the entry, also when its create
 * answers late. Request timeouts, session loss and closing behave as a lock's {@link ZooKeeperAttempt}.
 *
 * <p>Concurrency: {@code ended}, {@code firstPoll}, {@code target} and {@code waiting} are guarded by
 * {@code this}; lock-api never runs two calls of one attempt at once, but watches and the driver's
 * interrupts arrive on other threads.
 */
final class SharedAttempt implements TrackedAttempt {

    private final ZooKeeperDriver driver;
    private final String name;
    private final String parentPath;
    private final Share share;
    /** This attempt's entry, once created; completes whatever the request timeout. */
    private final CompletableFuture<Nodes.Created> created;

    private boolean ended;
    private boolean firstPoll = true;
    /** What the last poll said to wait for (a {@code WatchEntry} or {@code WatchChildren}); null after a grant. */
    private SharedQueue.Verdict target;
    private CompletableFuture<Void> waiting;

    SharedAttempt(ZooKeeperDriver driver, String name, String parentPath, Share share, byte[] owner) {
        this.driver = driver;
        this.name = name;
        this.parentPath = parentPath;
        this.share = share;
        this.created = driver.nodes().create(parentPath, SharedQueue.nodeName(share), owner);
    }

    @Override
    public CompletionStage<Optional<Grant>> poll(Duration ttl) {
        boolean first;
        synchronized (this) {
            if (driver.isClosed()) {
                return CompletableFuture.failedFuture(ZooKeeperDriver.closedException());
            }
            if (ended) {
                return CompletableFuture.failedFuture(
                        new IllegalStateException("attempt on shared name '" + name + "' has ended"));
            }
            target = null;
            first = firstPoll;
            firstPoll = false;
        }
        long epoch = driver.session().epoch();
        long sentAt = System.nanoTime();
        // As a lock's first poll: the listing sent right behind the create, before its reply, counts when it
        // lists this entry (ZooKeeper answers a session's requests in order), so an uncontended share takes
        // one round trip; otherwise the children are listed again once the create has answered.
        CompletableFuture<List<String>> early = first && !created.isDone() ? driver.nodes().children(parentPath) : null;
        CompletableFuture<Optional<SharedGrant>> polled = created.thenCompose(node -> {
            CompletableFuture<List<String>> read = early == null ? driver.nodes().children(parentPath)
                    : early.handle((listed, error) -> error == null && listed.contains(Paths.nodeName(node.path()))
                            ? CompletableFuture.completedFuture(listed)
                            : driver.nodes().children(parentPath)).thenCompose(c -> c);
            return read.thenCompose(children -> decide(node, children, epoch, sentAt));
        });
        // Admitted on the driver thread in the step that hands it over; a grant after the deadline is not
        // handed over, and the loop's abandon() deletes its entry.
        return driver.calls().bounded("the poll of shared name '" + name + "'", polled, late -> { },
                granted -> granted.map(g -> {
                    driver.admit(g.node(), name);
                    synchronized (this) {
                        ended = true;
                    }
                    driver.forget(this);
                    return (Grant) g;
                }));
    }

    /** The grant rule over the children as listed after this attempt's create. */
    private CompletableFuture<Optional<SharedGrant>> decide(Nodes.Created node, List<String> children, long epoch, long sentAt) {
        String path = node.path();
        SharedQueue.Verdict verdict = SharedQueue.decide(children, Paths.nodeName(path), share);
        if (verdict instanceof SharedQueue.Gone) {
            throw gone();
        }
        if (!(verdict instanceof SharedQueue.Granted)) {
            synchronized (this) {
                target = verdict;
            }
            return CompletableFuture.completedFuture(Optional.empty());
        }
        if (node.stat() != null) {
            return CompletableFuture.completedFuture(Optional.of(grant(path, node.stat(), epoch, sentAt)));
        }
        return driver.nodes().stat(path).thenApply(stat -> {
            if (stat == null) {
                throw gone();
            }
            return Optional.of(grant(path, stat, epoch, sentAt));
        });
    }

    private SharedGrant grant(String path, Stat stat, long epoch, long sentAt) {
        return new SharedGrant(new ZooKeeperGrant(path, stat.getCzxid(), 0, stat.getVersion(), epoch, sentAt), share);
    }

    @Override
    public CompletionStage<Void> changed() {
        SharedQueue.Verdict on;
        CompletableFuture<Void> w = new CompletableFuture<>();
        synchronized (this) {
            if (driver.isClosed()) {
                return CompletableFuture.failedFuture(ZooKeeperDriver.closedException());
            }
            if (ended || target == null) {
                return CompletableFuture.completedFuture(null);
            }
            on = target;
            waiting = w;
        }
        Watcher watcher = event -> {
            if (ZooKeeperAttempt.wakes(event)) {
                wake(w);
            }
        };
        CompletableFuture<Boolean> now;
        if (on instanceof SharedQueue.WatchEntry entry) {
            now = driver.nodes().watch(parentPath + "/" + entry.child(), watcher).thenApply(Objects::isNull);
        } else {
            // Set after the poll's listing: an entry ahead that left in between is a change already.
            List<String> ahead = ((SharedQueue.WatchChildren) on).ahead();
            now = driver.nodes().watchChildren(parentPath, watcher)
                    .thenApply(children -> children == null || !new HashSet<>(children).containsAll(ahead));
        }
        driver.calls().bounded("the watch for a change ahead in shared name '" + name + "'", now)
                .whenComplete((changedAlready, error) -> {
                    if (error != null) {
                        fail(w, error);
                    } else if (changedAlready) {
                        wake(w);
                    }
                });
        return w;
    }

    @Override
    public CompletionStage<Void> abandon() {
        CompletableFuture<Void> w;
        synchronized (this) {
            ended = true;
            w = waiting;
            waiting = null;
        }
        driver.forget(this);
        if (w != null) {
            w.complete(null);
        }
        // Registered on the create itself, so a create that answers after every deadline is still undone.
        CompletableFuture<Void> deleted = created.handle((node, error) -> node)
                .thenCompose(node -> node == null ? CompletableFuture.completedFuture(null) : driver.nodes().delete(node.path()));
        return driver.calls().bounded("abandoning the attempt on shared name '" + name + "'", deleted);
    }

    @Override
    public void interrupt() {
        CompletableFuture<Void> w;
        synchronized (this) {
            w = waiting;
        }
        if (w != null) {
            wake(w);
        }
    }

    @Override
    public void closed() {
        CompletableFuture<Void> w;
        synchronized (this) {
            w = waiting;
            waiting = null;
        }
        if (w != null) {
            w.completeExceptionally(ZooKeeperDriver.closedException());
        }
    }

    private void wake(CompletableFuture<Void> w) {
        synchronized (this) {
            if (waiting == w) {
                waiting = null;
            }
        }
        driver.calls().execute(() -> w.complete(null));
    }

    private void fail(CompletableFuture<Void> w, Throwable error) {
        synchronized (this) {
            if (waiting == w) {
                waiting = null;
            }
        }
        w.completeExceptionally(error);
    }

    private LockException gone() {
        return new LockException(LockException.Reason.UNAVAILABLE, "the queue entry of shared name '" + name
                + "' is gone from ZooKeeper: its session expired, or it was removed");
    }

    @Override
    public String toString() {
        return "SharedAttempt[" + parentPath + ", " + share + "]";
    }
}
