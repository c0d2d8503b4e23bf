package dev.warden.lock.zookeeper.internal;

import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooKeeper;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * Sends the versioned deletes of grants released at the same time as one ZooKeeper {@code multi}
 * ({@link MultiCombiner}): a busy client pays a write's proposal and log entry once per batch rather
 * than per release.
 *
 * <p>A {@code multi} is all or nothing. When it succeeds, every delete in it did. When it fails (one
 * node already gone or changed, a lost connection, anything), each delete is sent again alone through
 * {@code alone} (Curator's guaranteed delete, which says which one failed and keeps trying across a
 * lost connection): a delete that did happen then finds no node, the answer a delete whose first reply
 * was lost gets today.
 *
 * <p>Concurrency: the queue is {@link MultiCombiner}'s; the rest is final.
 */
final class DeleteCombiner extends MultiCombiner<DeleteCombiner.Delete> {

    private final Supplier<ZooKeeper> handle;
    private final BiFunction<String, Integer, CompletableFuture<KeeperException.Code>> alone;

    /**
     * @param handle the session's ZooKeeper handle (it may throw when there is none)
     * @param alone one delete of a path at a version, sent alone: OK, NONODE or BADVERSION, else fails
     */
    DeleteCombiner(Supplier<ZooKeeper> handle, BiFunction<String, Integer, CompletableFuture<KeeperException.Code>> alone,
                   int maxOnTheirWay) {
        super(maxOnTheirWay);
        this.handle = handle;
        this.alone = alone;
    }

    /** Deletes {@code path} if its data version is {@code version}: OK, NONODE or BADVERSION, else fails. */
    CompletableFuture<KeeperException.Code> delete(String path, int version) {
        Delete d = new Delete(path, version);
        submit(d);
        return d.result;
    }

    @Override
    String key(Delete write) {
        return write.path;
    }

    @Override
    void send(List<Delete> batch, Runnable answered) {
        if (batch.size() == 1) {
            Delete d = batch.get(0);
            alone.apply(d.path, d.version).whenComplete((code, error) -> {
                answered.run();
                complete(d.result, code, error);
            });
            return;
        }
        List<Op> ops = new ArrayList<>(batch.size());
        for (Delete d : batch) {
            ops.add(Op.delete(d.path, d.version));
        }
        try {
            handle.get().multi(ops, (rc, path, ctx, results) -> {
                answered.run();
                if (rc == KeeperException.Code.OK.intValue()) {
                    batch.forEach(d -> d.result.complete(KeeperException.Code.OK));
                } else {
                    batch.forEach(this::sendAlone);
                }
            }, null);
        } catch (RuntimeException e) {
            answered.run();
            batch.forEach(this::sendAlone);
        }
    }

    private void sendAlone(Delete d) {
        alone.apply(d.path, d.version).whenComplete((code, error) -> complete(d.result, code, error));
    }


    static final class Delete {
        final String path;
        final int version;
        final CompletableFuture<KeeperException.Code> result = new CompletableFuture<>();

        Delete(String path, int version) {
            this.path = path;
            this.version = version;
        }
    }
}
