package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.LockException;
import dev.warden.lock.spi.HolderListingDriver.NamedHolder;
import dev.warden.lock.spi.HolderReadingDriver.Holder;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Reads who a lock's queue has first, and ends that hold for an operator. The read: the children and
 * the namespace's token floor (pipelined, as an attempt reads them), then the first contender's node,
 * whose data is its owner and whose czxid plus the floor is its token; a first node deleted between the
 * two reads (released, expired) makes it read again, a few times. The eviction: one transaction that
 * writes the mark {@code /<ns>/%evicted-<name>} (the node's czxid, read by the evicted holder's next
 * renewal) and deletes the node. A mark is a small persistent node per lock ever force-released,
 * rewritten by the next eviction. Stateless.
 */
final class QueueHead {

    /** Reads of the queue before giving up on a queue whose head keeps leaving. */
    static final int TRIES = 3;

    private QueueHead() {
    }

    /** The queue's first node as read: its path, data, czxid, and the floor; null path when empty. */
    private record Head(String path, Nodes.Data data, long floor) {
        long token() {
            return floor + data.czxid();
        }
    }

    static CompletableFuture<Optional<Holder>> read(Nodes nodes, String lockPath) {
        return head(nodes, lockPath, TRIES).thenApply(h -> h.path() == null ? Optional.<Holder>empty()
                : Optional.of(new Holder(new String(h.data().bytes(), StandardCharsets.UTF_8), h.token())));
    }

    /**
     * Every lock of the namespace with a queue: the namespace's children (its own nodes, {@code %...},
     * skipped: the floor, epoch and eviction marks, and shared names' parents {@code %shared-...}, which
     * operators' listing, reading and evicting do not cover), then each lock's head read as
     * {@link #read} does, all pipelined. Cost per holder: three requests (its children, the floor, its
     * first node); one more for the namespace.
     */
    static CompletableFuture<List<NamedHolder>> list(Nodes nodes, String namespacePath) {
        return nodes.children(namespacePath).thenCompose(children -> {
            List<CompletableFuture<Optional<NamedHolder>>> reads = new ArrayList<>();
            for (String child : children) {
                if (child.startsWith("%")) {
                    // The namespace's own nodes and shared names' queues: never a lock's (see Paths).
                    continue;
                }
                String name = Paths.decode(child);
                reads.add(read(nodes, namespacePath + "/" + child).thenApply(h -> h.map(holder -> new NamedHolder(name, holder))));
            }
            return CompletableFuture.allOf(reads.toArray(CompletableFuture[]::new)).thenApply(v -> {
                List<NamedHolder> holders = new ArrayList<>(reads.size());
                reads.forEach(r -> r.join().ifPresent(holders::add));
                return holders;
            });
        });
    }

    /** Ends the first contender's hold if its token is {@code token}. */
    static CompletableFuture<Boolean> evict(Nodes nodes, String lockPath, long token) {
        return head(nodes, lockPath, TRIES).thenCompose(h -> {
            if (h.path() == null || h.token() != token) {
                return CompletableFuture.completedFuture(false);
            }
            String mark = markPath(lockPath);
            return nodes.stat(mark).thenCompose(stat -> nodes.markAndDelete(mark, stat != null, h.data().czxid(), h.path()));
        });
    }

    /** Whether the last eviction of {@code lockPath} ended the node created at {@code czxid}. */
    static CompletableFuture<Boolean> evicted(Nodes nodes, String lockPath, long czxid) {
        return nodes.data(markPath(lockPath)).thenApply(d -> d != null
                && new String(d.bytes(), StandardCharsets.UTF_8).equals(Long.toString(czxid)));
    }

    /**
     * {@code /<ns>/%evicted-<encoded name>}: no lock's path, as an encoded name's {@code '%'} is always
     * followed by two hex digits.
     */
    static String markPath(String lockPath) {
        int slash = lockPath.lastIndexOf('/');
        return lockPath.substring(0, slash) + "/%evicted-" + lockPath.substring(slash + 1);
    }

    private static CompletableFuture<Head> head(Nodes nodes, String lockPath, int tries) {
        CompletableFuture<List<String>> children = nodes.children(lockPath);
        CompletableFuture<Long> floor = nodes.floor(Paths.floorPath(lockPath));
        return children.thenCombine(floor, (c, f) -> new Object[] {Paths.queue(c), f}).thenCompose(read -> {
            @SuppressWarnings("unchecked")
            List<String> queue = (List<String>) read[0];
            long base = (Long) read[1];
            if (queue.isEmpty()) {
                return CompletableFuture.completedFuture(new Head(null, null, base));
            }
            String path = lockPath + "/" + queue.get(0);
            return nodes.data(path).thenCompose(data -> {
                if (data != null) {
                    return CompletableFuture.completedFuture(new Head(path, data, base));
                }
                if (tries <= 1) {
                    return CompletableFuture.failedFuture(new LockException(LockException.Reason.UNAVAILABLE,
                            "the first contender of " + lockPath + " left before it could be read, " + TRIES + " times in a row"));
                }
                return head(nodes, lockPath, tries - 1);
            });
        });
    }
}
