package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.Grant;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.data.Stat;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * What a lock's {@link ZooKeeperAttempt} and a shared name's {@link SharedAttempt} do alike: one
 * ephemeral sequential entry under a parent node, created (protected as Curator protects a create, so one
 * whose reply was lost is found again or deleted; with the creates started at the same time, see
 * {@link CreateCombiner}) as soon as the attempt starts; polls that read the queue
 * (the first one right behind the create: the parent's children, and for a lock the namespace's token
 * floor in the same request), bounded by the request timeout, with a grant admitted in order with
 * connection states; a wait between polls on what the last poll said to watch, woken by a change, the
 * session's end or the driver's interrupt and failed by its close; and an abandon that deletes the entry,
 * also when its create answers late. Each attempt keeps its own rule: what in the listing keeps it out,
 * what to watch, and what it grants.
 *
 * <p>Concurrency: {@code ended}, {@code firstPoll}, {@code target} and {@code waiting} are guarded by
 * {@code this}; lock-api never runs two calls of one attempt at once, but watches and the driver's
 * interrupts arrive on other threads.
 *
 * @param <T> what a poll that did not grant says to wait for
 */
abstract class QueuedAttempt<T> implements TrackedAttempt {

    final ZooKeeperDriver driver;
    final String name;
    /** The parent node of the entries. */
    final String queuePath;
    /** The name as messages say it: {@code lock 'x'}, {@code shared name 'x'}. */
    private final String what;
    /** This attempt's entry, once created; completes whatever the request timeout. */
    private final CompletableFuture<Nodes.Created> created;
    /** Completes once the entry's create was handed to the session (it may wait for others first). */
    private final CompletableFuture<Void> createSent;

    private boolean ended;
    private boolean firstPoll = true;
    /** What the last poll said to wait for; null after a grant. */
    private T target;
    private CompletableFuture<Void> waiting;

    /** @param kind {@code lock} or {@code shared name}, for messages */
    QueuedAttempt(ZooKeeperDriver driver, String kind, String name, String queuePath, CreateCombiner.Creation creation) {
        this.driver = driver;
        this.name = name;
        this.queuePath = queuePath;
        this.what = kind + " '" + name + "'";
        this.created = creation.created();
        this.createSent = creation.sent();
    }

    /** The entry's place in {@code children}: what keeps it out, null when granted; throws {@link #gone()} when absent. */
    abstract T ahead(List<String> children, String entry);

    /**
     * The queue as one read: the parent's children and the token floor a grant adds to its czxid, which
     * is read with the listing, so it is at least as new as the listing that grants.
     */
    abstract CompletableFuture<Nodes.Listing> read();

    /** What the loop is handed for the entry's admitted node grant. */
    abstract Grant handOver(ZooKeeperGrant node);

    /** Sets {@code watcher} on what {@code on} names, bounded; completes true when it changed already. */
    abstract CompletableFuture<Boolean> watch(T on, Watcher watcher);

    @Override
    public final CompletionStage<Optional<Grant>> poll(Duration ttl) {
        boolean first;
        synchronized (this) {
            if (driver.isClosed()) {
                return CompletableFuture.failedFuture(ZooKeeperDriver.closedException());
            }
            if (ended) {
                return CompletableFuture.failedFuture(new IllegalStateException("attempt on " + what + " has ended"));
            }
            target = null;
            first = firstPoll;
            firstPoll = false;
        }
        long epoch = driver.session().epoch();
        long sentAt = System.nanoTime();
        // ZooKeeper answers one session's requests in order, so the queue read right behind the create,
        // without waiting for its reply, normally lists the new entry already: an uncontended acquire
        // takes one round trip. It is sent when the create is (a create may wait to go with others), from
        // the thread that sends it. That read counts only if it lists this entry; otherwise (parents
        // created first, a create retried alone or after a lost connection, any error) the queue is read
        // again once the create has answered, as every later poll does.
        CompletableFuture<Nodes.Listing> early = first && !created.isDone() ? createSent.thenCompose(sent -> read()) : null;
        CompletableFuture<Optional<ZooKeeperGrant>> polled = created.thenCompose(node -> {
            CompletableFuture<Nodes.Listing> read = early == null ? read()
                    : early.handle((listed, error) -> error == null
                            && listed.children().contains(Paths.nodeName(node.path()))
                            ? CompletableFuture.completedFuture(listed) : read()).thenCompose(c -> c);
            return read.thenCompose(queue -> decide(node, queue, epoch, sentAt));
        });
        // A grant is admitted in the step that hands it over, in order with connection states; one that
        // comes after the deadline is not handed over, and the loop's abandon() deletes its entry.
        return driver.calls().decided("the poll of " + what, polled,
                granted -> granted.map(g -> {
                    driver.admit(g, name);
                    synchronized (this) {
                        ended = true;
                    }
                    driver.forget(this);
                    return handOver(g);
                }));
    }

    /**
     * The attempt's rule over the children as listed after its create: grants (with the czxid and
     * version from the create's reply, else from a read of the entry), otherwise notes what to watch.
     */
    private CompletableFuture<Optional<ZooKeeperGrant>> decide(Nodes.Created node, Nodes.Listing read, long epoch,
                                                               long sentAt) {
        String path = node.path();
        T on = ahead(read.children(), Paths.nodeName(path));
        if (on != null) {
            synchronized (this) {
                target = on;
            }
            return CompletableFuture.completedFuture(Optional.empty());
        }
        long floor = read.floor();
        if (node.stat() != null) {
            return CompletableFuture.completedFuture(Optional.of(grant(path, node.stat(), floor, epoch, sentAt)));
        }
        return driver.nodes().stat(path).thenApply(stat -> {
            if (stat == null) {
                throw gone();
            }
            return Optional.of(grant(path, stat, floor, epoch, sentAt));
        });
    }

    private static ZooKeeperGrant grant(String path, Stat stat, long floor, long epoch, long sentAt) {
        return new ZooKeeperGrant(path, stat.getCzxid(), floor, stat.getVersion(), epoch, sentAt);
    }

    @Override
    public final CompletionStage<Void> changed() {
        T on;
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
            if (wakes(event)) {
                wake(w);
            }
        };
        watch(on, watcher).whenComplete((changedAlready, error) -> {
            if (error != null) {
                fail(w, error);
            } else if (changedAlready) {
                wake(w);
            }
        });
        return w;
    }

    /**
     * What was watched changed (deleted), or the session ended (the entry is gone, which the next poll
     * reports). A disconnection alone does not wake: ZooKeeper sets the watch again when it reconnects,
     * and fires it then if what it watches changed meanwhile.
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
    public final CompletionStage<Void> abandon() {
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
        return driver.calls().bounded("abandoning the attempt on " + what, deleted);
    }

    /** The session expired or the client closed: wake the loop so its next poll says so. */
    @Override
    public final void interrupt() {
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
    public final void closed() {
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

    final LockException gone() {
        return new LockException(LockException.Reason.UNAVAILABLE, "the queue entry of " + what
                + " is gone from ZooKeeper: its session expired, or it was removed");
    }
}
