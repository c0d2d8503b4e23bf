package dev.warden.lock.zookeeper.internal;

import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import org.apache.zookeeper.ZooKeeper;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Supplier;

/**
 * Sends the versioned deletes of grants released at the same time as one ZooKeeper {@code multi}: a
 * write costs the ensemble a proposal and a transaction-log entry whatever it holds, so a busy client
 * pays them once per batch rather than per release. Two deletes (or batches) may be on their way at
 * once; deletes started meanwhile wait and go together when one answers. A delete started on an idle
 * client goes at once, alone, as before.
 *
 * <p>A {@code multi} is all or nothing. When it succeeds, every delete in it did. When it fails (one
 * node already gone or changed, a lost connection, anything), each delete is sent again alone through
 * {@code alone} (Curator's guaranteed delete, which says which one failed and keeps trying across a
 * lost connection): a delete that did happen then finds no node, the answer a delete whose first reply
 * was lost gets today.
 *
 * <p>Concurrency: {@code waiting}, {@code onTheirWay}, {@code answersToDrain}, {@code draining} and
 * {@code combinedCalls} are guarded by {@code this}; calls are sent outside the monitor.
 */
final class DeleteCombiner {

    /** The most deletes in one {@code multi}: far below ZooKeeper's 1 MB request limit (jute.maxbuffer). */
    static final int MAX_DELETES = 64;

    private final Supplier<ZooKeeper> handle;
    private final BiFunction<String, Integer, CompletableFuture<KeeperException.Code>> alone;
    private final int maxOnTheirWay;
    private final ArrayDeque<Delete> waiting = new ArrayDeque<>();
    private int onTheirWay;
    /** Answers whose next batch is still to be sent, and whether a thread is sending them: see {@link #answered}. */
    private int answersToDrain;
    private boolean draining;
    private long combinedCalls;

    /**
     * @param handle the session's ZooKeeper handle (it may throw when there is none)
     * @param alone one delete of a path at a version, sent alone: OK, NONODE or BADVERSION, else fails
     */
    DeleteCombiner(Supplier<ZooKeeper> handle, BiFunction<String, Integer, CompletableFuture<KeeperException.Code>> alone,
                   int maxOnTheirWay) {
        this.handle = handle;
        this.alone = alone;
        this.maxOnTheirWay = maxOnTheirWay;
    }

    /** Deletes {@code path} if its data version is {@code version}: OK, NONODE or BADVERSION, else fails. */
    CompletableFuture<KeeperException.Code> delete(String path, int version) {
        Delete d = new Delete(path, version);
        List<Delete> batch;
        synchronized (this) {
            waiting.add(d);
            if (onTheirWay >= maxOnTheirWay) {
                return d.result;
            }
            batch = nextBatch();
        }
        send(batch);
        return d.result;
    }

    /** How many {@code multi}s of two deletes or more were sent: for tests. */
    synchronized long combinedCalls() {
        return combinedCalls;
    }

    /** Holding {@code this}: the next batch (no path twice), counted on its way; null when none waits. */
    private List<Delete> nextBatch() {
        if (waiting.isEmpty()) {
            return null;
        }
        List<Delete> batch = new ArrayList<>();
        Set<String> paths = new HashSet<>();
        while (!waiting.isEmpty() && batch.size() < MAX_DELETES && paths.add(waiting.peek().path)) {
            batch.add(waiting.poll());
        }
        onTheirWay++;
        if (batch.size() > 1) {
            combinedCalls++;
        }
        return batch;
    }

    private void send(List<Delete> batch) {
        if (batch == null) {
            return;
        }
        if (batch.size() == 1) {
            Delete d = batch.get(0);
            alone.apply(d.path, d.version).whenComplete((code, error) -> {
                answered();
                complete(d, code, error);
            });
            return;
        }
        List<Op> ops = new ArrayList<>(batch.size());
        for (Delete d : batch) {
            ops.add(Op.delete(d.path, d.version));
        }
        try {
            handle.get().multi(ops, (rc, path, ctx, results) -> {
                answered();
                if (rc == KeeperException.Code.OK.intValue()) {
                    batch.forEach(d -> d.result.complete(KeeperException.Code.OK));
                } else {
                    batch.forEach(this::sendAlone);
                }
            }, null);
        } catch (RuntimeException e) {
            answered();
            batch.forEach(this::sendAlone);
        }
    }

    private void sendAlone(Delete d) {
        alone.apply(d.path, d.version).whenComplete((code, error) -> complete(d, code, error));
    }

    /**
     * One call answered: the next batch, if one waits, goes now. A call that fails at once (Curator
     * closed) answers inside {@link #send}; the thread already sending batches sends the next one too,
     * in a loop, so a queue of such failures never deepens the stack.
     */
    private void answered() {
        synchronized (this) {
            onTheirWay--;
            answersToDrain++;
            if (draining) {
                return;
            }
            draining = true;
        }
        while (true) {
            List<Delete> next;
            synchronized (this) {
                if (answersToDrain == 0) {
                    draining = false;
                    return;
                }
                answersToDrain--;
                next = nextBatch();
            }
            send(next);
        }
    }

    private static void complete(Delete d, KeeperException.Code code, Throwable error) {
        if (error != null) {
            d.result.completeExceptionally(error);
        } else {
            d.result.complete(code);
        }
    }

    private static final class Delete {
        final String path;
        final int version;
        final CompletableFuture<KeeperException.Code> result = new CompletableFuture<>();

        Delete(String path, int version) {
            this.path = path;
            this.version = version;
        }
    }
}
