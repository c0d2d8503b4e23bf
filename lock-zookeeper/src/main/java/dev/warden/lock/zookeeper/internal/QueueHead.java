package dev.warden.lock.zookeeper.internal;

import dev.warden.lock.spi.HolderReadingDriver.Holder;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * Reads who a lock's queue has first: the children and the namespace's token floor (pipelined, as an
 * attempt reads them), then the first contender's node, whose data is its owner and whose czxid plus
 * the floor is its token. A first node deleted between the two reads (released, expired) makes it read
 * again, a few times. Stateless.
 */
final class QueueHead {

    /** Reads of the queue before giving up on a queue whose head keeps leaving. */
    static final int TRIES = 3;

    private QueueHead() {
    }

    static CompletableFuture<Optional<Holder>> read(Nodes nodes, String lockPath) {
        return read(nodes, lockPath, TRIES);
    }

    private static CompletableFuture<Optional<Holder>> read(Nodes nodes, String lockPath, int tries) {
        CompletableFuture<List<String>> children = nodes.children(lockPath);
        CompletableFuture<Long> floor = nodes.floor(Paths.floorPath(lockPath));
        return children.thenCombine(floor, (c, f) -> new Object[] {Paths.queue(c), f}).thenCompose(read -> {
            @SuppressWarnings("unchecked")
            List<String> queue = (List<String>) read[0];
            long base = (Long) read[1];
            if (queue.isEmpty()) {
                return CompletableFuture.completedFuture(Optional.<Holder>empty());
            }
            return nodes.data(lockPath + "/" + queue.get(0)).thenCompose(data -> {
                if (data != null) {
                    return CompletableFuture.completedFuture(Optional.of(
                            new Holder(new String(data.bytes(), StandardCharsets.UTF_8), base + data.czxid())));
                }
                if (tries <= 1) {
                    return CompletableFuture.failedFuture(new dev.warden.lock.LockException(
                            dev.warden.lock.LockException.Reason.UNAVAILABLE, "the first contender of " + lockPath
                            + " left before it could be read, " + TRIES + " times in a row"));
                }
                return read(nodes, lockPath, tries - 1);
            });
        });
    }
}
