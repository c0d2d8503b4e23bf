package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.spi.LeaseCachingDriver.ContenderWatch;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;

/**
 * The contender watches of kept locks ({@code warden.lock.lease-cache}): a child watch on a lock's queue, the
 * parent under which every contender creates its entry. The first read of the children sets it and reports an
 * entry already queued behind the hold (one that came between the grant and the watch); each change fires the
 * one-shot watch, whose re-read sets it again and reports the entries it had not seen: a new contender, never
 * the hold's own node nor a removal. One read per kept hold, one more per change while it is watched.
 *
 * <p>Closing does not remove the watch on the server (one more request per hold): the cache closes it before it
 * deletes the hold's node, and that delete, a change of the children, fires the watch, which then does nothing
 * and is not set again. The same goes for a watch whose first read answered after its deadline.
 *
 * <p>When the hold's own node is no longer listed (removed behind its back, evicted, its session gone, which
 * the watch is also told of; or the queue itself reaped, which as a container it is only once empty), no
 * contender can queue behind that hold: an entry created now is the next holder's, not a contender for this
 * one. The watch stops without reporting (what ended the hold ends its lease, and the cache's release of it
 * compares and deletes, finding nothing), rather than set an exists watch for the parent's next create, whose
 * queue would be another holder's.
 */
final class ContenderWatches {

    private static final Logger log = LoggerFactory.getLogger(ContenderWatches.class);

    private ContenderWatches() {
    }

    /**
     * Watches {@code queuePath}'s children for entries other than {@code ownNode}; completes, bounded by the
     * request timeout, once the first read with the watch set has answered (and reported what it found), or
     * fails with nothing left to call {@code asked}.
     */
    static CompletableFuture<ContenderWatch> start(Calls calls, Nodes nodes, String name, String queuePath, String ownNode,
                                                   Runnable asked) {
        Watch watch = new Watch(calls, nodes, name, queuePath, ownNode, asked);
        return calls.bounded("the contender watch of lock '" + name + "'", watch.read()).handle((v, error) -> {
            if (error != null) {
                watch.close();
                throw error instanceof CompletionException c ? c : new CompletionException(error);
            }
            return watch;
        });
    }

    /**
     * One kept hold's watch. Reads answer and the watch fires on ZooKeeper's event thread, where
     * {@code asked} runs too; {@link #close()} comes from any thread.
     *
     * <p>Concurrency: {@code stopped} and {@code known} are guarded by {@code this}; {@code asked} is never
     * called holding it (it may close the watch).
     */
    private static final class Watch implements ContenderWatch, Watcher {

        private final Calls calls;
        private final Nodes nodes;
        private final String name;
        private final String queuePath;
        private final String ownNode;
        private final Runnable asked;
        /** Closed, or nothing more to watch: the watch does nothing and is not set again. */
        private boolean stopped;
        /** The children other than the hold's own node at the last read: reported already. */
        private Set<String> known = Set.of();

        Watch(Calls calls, Nodes nodes, String name, String queuePath, String ownNode, Runnable asked) {
            this.calls = calls;
            this.nodes = nodes;
            this.name = name;
            this.queuePath = queuePath;
            this.ownNode = ownNode;
            this.asked = asked;
        }

        /** Reads the children with the watch set, and reports what is new. */
        CompletableFuture<Void> read() {
            return nodes.watchChildren(queuePath, this).thenAccept(this::listed);
        }

        private void listed(List<String> children) {
            boolean report;
            synchronized (this) {
                if (stopped) {
                    return;
                }
                if (children == null || !children.contains(ownNode)) {
                    // The hold is gone behind the cache's back (it closes the watch before it deletes): another
                    // client may hold the lock already, so it is reported, and nothing more is watched.
                    stopped = true;
                    report = true;
                } else {
                    Set<String> others = new HashSet<>(children);
                    others.remove(ownNode);
                    report = !known.containsAll(others);
                    known = others;
                }
            }
            if (report) {
                asked.run();
            }
        }

        @Override
        public void process(WatchedEvent event) {
            if (event.getType() == Event.EventType.None) {
                // A disconnection leaves the watch to ZooKeeper, which sets it again on reconnecting and fires it
                // if the children changed meanwhile. The session's end (expired, or its handle closed) takes the
                // hold's node with it: reported, as a read that no longer lists it is, and nothing more watched.
                if (QueuedAttempt.wakes(event) && stop()) {
                    asked.run();
                }
                return;
            }
            synchronized (this) {
                if (stopped) {
                    return;
                }
            }
            calls.bounded("the contender watch of lock '" + name + "'", read()).whenComplete((v, error) -> {
                if (error != null && stop()) {
                    // Not set again: a contender could go unseen, so the hold is given up rather than kept unwatched.
                    log.debug("could not watch lock '{}' for contenders again; reported as asked", name, error);
                    asked.run();
                }
            });
        }

        /** True when this stopped the watch, false when it was stopped already. */
        private synchronized boolean stop() {
            boolean was = stopped;
            stopped = true;
            return !was;
        }

        @Override
        public void close() {
            stop();
        }

        @Override
        public String toString() {
            return "ContenderWatch[" + queuePath + ", own " + ownNode + "]";
        }
    }
}
