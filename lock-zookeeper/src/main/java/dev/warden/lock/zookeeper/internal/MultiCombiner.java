package dev.warden.lock.zookeeper.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;

/**
 * The queue behind {@link DeleteCombiner} and {@link CreateCombiner}: a write costs the ensemble a
 * proposal and a transaction-log entry whatever it holds, so writes started while others are on their
 * way wait and go together, as one {@code multi}, when one answers. At most {@code maxOnTheirWay}
 * calls (single writes or batches) are on their way at once; a write started on an idle client goes at
 * once, alone, as it would without this. No key ({@link #key}) goes twice in one batch: a batch ends
 * before a write whose key it holds, so writes of one key also go in the order they started. How a
 * batch is sent, and what a failed one does, is the subclass's.
 *
 * <p>Concurrency: {@code waiting}, {@code onTheirWay}, {@code answersToDrain}, {@code draining} and
 * {@code combinedCalls} are guarded by {@code this}; calls are sent outside the monitor.
 *
 * @param <M> one write waiting to be sent
 */
abstract class MultiCombiner<M> {

    /** The most writes in one {@code multi}: far below ZooKeeper's 1 MB request limit (jute.maxbuffer). */
    static final int MAX_WRITES = 64;

    private final int maxOnTheirWay;
    private final ArrayDeque<M> waiting = new ArrayDeque<>();
    private int onTheirWay;
    /** Answers whose next batch is still to be sent, and whether a thread is sending them: see {@link #answered}. */
    private int answersToDrain;
    private boolean draining;
    private long combinedCalls;

    MultiCombiner(int maxOnTheirWay) {
        this.maxOnTheirWay = maxOnTheirWay;
    }

    /** What two writes in one batch must not share: the node deleted, the parent of the node created. */
    abstract String key(M write);

    /**
     * Sends {@code batch} (one write or more); {@code answered} must run exactly once, when the call
     * answers or fails, before or after the writes' own results complete.
     */
    abstract void send(List<M> batch, Runnable answered);

    /** Queues {@code write}; sends it (and whatever else waits) when fewer than the most calls are on their way. */
    final void submit(M write) {
        List<M> batch;
        synchronized (this) {
            waiting.add(write);
            if (onTheirWay >= maxOnTheirWay) {
                return;
            }
            batch = nextBatch();
        }
        sendBatch(batch);
    }

    /**
     * Puts {@code writes} back at the head of the queue, in order (they started before anything waiting),
     * and sends a batch if fewer than the most calls are on their way.
     */
    final void resubmitFirst(List<M> writes) {
        if (writes.isEmpty()) {
            return;
        }
        List<M> batch;
        synchronized (this) {
            for (int i = writes.size() - 1; i >= 0; i--) {
                waiting.addFirst(writes.get(i));
            }
            if (onTheirWay >= maxOnTheirWay) {
                return;
            }
            batch = nextBatch();
        }
        sendBatch(batch);
    }

    /** How many {@code multi}s of two writes or more were sent: for tests. */
    final synchronized long combinedCalls() {
        return combinedCalls;
    }

    /** Completes a write's {@code result} with what its call gave. */
    static <T> void complete(CompletableFuture<T> result, T value, Throwable error) {
        if (error != null) {
            result.completeExceptionally(error);
        } else {
            result.complete(value);
        }
    }

    /** Holding {@code this}: the next batch (no key twice), counted on its way; null when none waits. */
    private List<M> nextBatch() {
        if (waiting.isEmpty()) {
            return null;
        }
        List<M> batch = new ArrayList<>();
        Set<String> keys = new HashSet<>();
        while (!waiting.isEmpty() && batch.size() < MAX_WRITES && keys.add(key(waiting.peek()))) {
            batch.add(waiting.poll());
        }
        onTheirWay++;
        if (batch.size() > 1) {
            combinedCalls++;
        }
        return batch;
    }

    private void sendBatch(List<M> batch) {
        if (batch != null) {
            send(batch, this::answered);
        }
    }

    /**
     * One call answered: the next batch, if one waits, goes now. A call that fails at once (no handle,
     * Curator closed) answers inside {@link #send}; the thread already sending batches sends the next one
     * too, in a loop, so a queue of such failures never deepens the stack.
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
            List<M> next;
            synchronized (this) {
                if (answersToDrain == 0) {
                    draining = false;
                    return;
                }
                answersToDrain--;
                next = nextBatch();
            }
            sendBatch(next);
        }
    }
}
