package dev.warden.quota.internal;

import dev.warden.quota.Deduction;
import dev.warden.quota.Outcome;
import dev.warden.quota.redis.RedisConnection;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiFunction;

/**
 * {@code deductAll}'s batches on the manually flushed batch connection: a batch's calls are queued on it
 * and leave in one write (one per primary on a Cluster), one batch at a time; then each is awaited.
 *
 * <p>Thread-safe: the batch connection is guarded by {@code batchLock}, held from a batch's first call to
 * its flush; the rest is immutable.
 */
final class DeductionBatches {

    private final RedisConnection batchCommands;
    private final ReentrantLock batchLock = new ReentrantLock();
    private final long syncWaitNanos;
    private final String endpoint;

    DeductionBatches(RedisConnection batchConnection, long syncWaitNanos, String endpoint) {
        this.batchCommands = batchConnection;
        this.syncWaitNanos = syncWaitNanos;
        this.endpoint = endpoint;
    }

    /**
     * Sends each deduction by {@code call} on the batch connection, then awaits them all: their outcomes in
     * order, or the first failure with the others suppressed in it.
     */
    List<Outcome> deductAll(List<Deduction> deductions,
                            BiFunction<RedisConnection, Deduction, CompletableFuture<Outcome>> call) {
        List<CompletableFuture<Outcome>> calls = new ArrayList<>(deductions.size());
        batchLock.lock();
        try {
            for (Deduction d : deductions) {
                calls.add(call.apply(batchCommands, d));
            }
        } finally {
            // Flushed even when dispatch failed half-way, so nothing lingers into the next batch.
            batchCommands.flushCommands();
            batchLock.unlock();
        }
        List<Outcome> outcomes = new ArrayList<>(calls.size());
        RuntimeException failure = null;
        for (int i = 0; i < calls.size(); i++) {
            try {
                outcomes.add(Errors.await(calls.get(i), syncWaitNanos, endpoint, "deduction " + i + " of a batch"));
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else if (failure != e) {
                    failure.addSuppressed(e);
                }
            }
        }
        if (failure != null) {
            throw failure;
        }
        return outcomes;
    }
}
