package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * One contender: an ephemeral sequential node in the lock's queue, created (with Curator's
 * protection, so a create whose reply was lost is found again or deleted) as soon as the attempt
 * starts. A poll grants when the node is first in the queue and still exists; otherwise it notes
 * the node just ahead, and {@link #changed()} watches only that one, so a release wakes one waiter,
 * not the herd. {@link #abandon()} deletes the node, also when its create answers late.
 *
 * <p>Concurrency: {@code ended}, {@code firstPoll}, {@code predecessor} and {@code waiting} are
 * guarded by {@code this}; lock-api never runs two calls of one attempt at once, but watches and the
 * driver's interrupts arrive on other threads.
 */
final class ZooKeeperAttempt implements TrackedAttempt {

    private final ZooKeeperDriver driver;
    private final String name;
    private final String lockPath;
    private final String floorPath;
    /** This attempt's node, once created; completes whatever the request timeout. */
    private final CompletableFuture<Nodes.Created> created;

    private boolean ended;
    private boolean firstPoll = true;
    private String predecessor;
    private CompletableFuture<Void> waiting;

    ZooKeeperAttempt(ZooKeeperDriver driver, String name, String lockPath, byte[] owner) {
        this.driver = driver;
        this.name = name;
        this.lockPath = lockPath;
        this.floorPath = Paths.floorPath(lockPath);
        this.created = driver.nodes().create(lockPath, owner);
    }

    @Override
    public CompletionStage<Optional<Grant>> poll(Duration ttl) {
        boolean first;
        synchronized (this) {
            if (driver.isClosed()) {
                return CompletableFuture.failedFuture(ZooKeeperDriver.closedException());
            }
            if (ended) {
                return CompletableFuture.failedFuture(new IllegalStateException("attempt on lock '" + name + "' has ended"));
            }
            predecessor = null;
            first = firstPoll;
            firstPoll = false;
        }
        long epoch = driver.session().epoch();
        long sentAt = System.nanoTime();
        // ZooKeeper answers one session's requests in order, so the queue read right behind the create,
        // without waiting for its reply, normally lists the new node already: an uncontended acquire
        // takes one round trip. That read counts only if it lists this node; otherwise (parents created
        // first, a create retried after a lost connection, any error) the queue is read again once the
        // create has answered, as every later poll does.
        CompletableFuture<List<String>> early = first && !created.isDone() ? driver.nodes().children(lockPath) : null;
        // The floor is read right behind each queue read, in the same session: ZooKeeper answers them in
        // order, so it is at least as new as the queue that grants, and costs no round trip of its own.
        CompletableFuture<Long> earlyFloor = early == null ? null : driver.nodes().floor(floorPath);
        CompletableFuture<Optional<ZooKeeperGrant>> polled = created.thenCompose(node -> {
            CompletableFuture<Queue> read = early == null ? read()
                    : early.handle((listed, error) -> error == null && listed.contains(Paths.nodeName(node.path()))
                            ? earlyFloor.thenApply(floor -> new Queue(listed, floor))
                            : read()).thenCompose(c -> c);
            return read.thenCompose(queue -> decide(node, queue, epoch, sentAt));
        });
        // A grant is admitted on the driver thread in the step that hands it over; one that comes after
        // the deadline is not handed over, and the loop's abandon() deletes its node.
        return driver.calls().bounded("the poll of lock '" + name + "'", polled, late -> { },
                granted -> granted.map(g -> {
                    driver.admit(g, name);
                    synchronized (this) {
                        ended = true;
                    }
                    driver.forget(this);
                    return (Grant) g;
                }));
    }

    /** The queue and, sent right behind it, the namespace's token floor. */
    private CompletableFuture<Queue> read() {
        CompletableFuture<List<String>> children = driver.nodes().children(lockPath);
        CompletableFuture<Long> floor = driver.nodes().floor(floorPath);
        return children.thenCombine(floor, Queue::new);
    }

    private record Queue(List<String> children, long floor) {
    }

    /**
     * Reads the queue as listed after this attempt's create: first grants (with the czxid and version
     * from the create's reply, else from a read of the node), otherwise notes the node just ahead.
     */
    private CompletableFuture<Optional<ZooKeeperGrant>> decide(Nodes.Created node, Queue read, long epoch, long sentAt) {
        String path = node.path();
        List<String> queue = Paths.queue(read.children());
        int at = queue.indexOf(Paths.nodeName(path));
        if (at < 0) {
            throw gone();
        }
        if (at > 0) {
            synchronized (this) {
                predecessor = lockPath + "/" + queue.get(at - 1);
            }
            return CompletableFuture.completedFuture(Optional.empty());
        }
        long floor = read.floor();
        if (node.stat() != null) {
            return CompletableFuture.completedFuture(Optional.of(
                    new ZooKeeperGrant(path, node.stat().getCzxid(), floor, node.stat().getVersion(), epoch, sentAt)));
        }
        return driver.nodes().stat(path).thenApply(stat -> {
            if (stat == null) {
                throw gone();
            }
            return Optional.of(new ZooKeeperGrant(path, stat.getCzxid(), floor, stat.getVersion(), epoch, sentAt));
        });
    }

    @Override
    public CompletionStage<Void> changed() {
        String ahead;
        CompletableFuture<Void> w = new CompletableFuture<>();
        synchronized (this) {
            if (driver.isClosed()) {
                return CompletableFuture.failedFuture(ZooKeeperDriver.closedException());
            }
            if (ended || predecessor == null) {
                return CompletableFuture.completedFuture(null);
            }
            ahead = predecessor;
            waiting = w;
        }
        Watcher watcher = event -> {
            if (wakes(event)) {
                wake(w);
            }
        };
        driver.calls().bounded("the watch on the node ahead in lock '" + name + "'", driver.nodes().watch(ahead, watcher))
                .whenComplete((stat, error) -> {
                    if (error != null) {
                        fail(w, error);
                    } else if (stat == null) {
                        wake(w);
                    }
                });
        return w;
    }

    /**
     * The node ahead changed (deleted), or the session ended (the queue entry is gone, which the next
     * poll reports). A disconnection alone does not wake: ZooKeeper sets the watch again when it
     * reconnects, and fires it then if the node went away meanwhile. Shared attempts wake alike.
     */
    static boolean wakes(WatchedEvent event) {
        if (event.getType() != Watcher.Event.EventType.None) {
            return true;
        }
        Watcher.Event.KeeperState state = event.getState();
        return state == Watcher.Event.KeeperState.Expired || state == Watcher.Event.KeeperState.Closed
                || state == Watcher.Event.KeeperState.AuthFailed;
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
        return driver.calls().bounded("abandoning the attempt on lock '" + name + "'", deleted);
    }

    /** The session expired or the client closed: wake the loop so its next poll says so. */
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

    /** The driver closed: a pending wait fails with CLOSED. */
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
        return new LockException(LockException.Reason.UNAVAILABLE, "the queue entry of lock '" + name
                + "' is gone from ZooKeeper: its session expired, or it was removed");
    }

    @Override
    public String toString() {
        return "ZooKeeperAttempt[" + lockPath + "]";
    }
}
