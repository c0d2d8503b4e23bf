package dev.warden.quota.ledger.internal.consume;

import java.util.concurrent.atomic.AtomicLong;

/** A consumer's counters since start: written by its loop, read from any thread. */
public final class ConsumerCounters {

    final AtomicLong batches = new AtomicLong();
    final AtomicLong applied = new AtomicLong();
    final AtomicLong redelivered = new AtomicLong();
    final AtomicLong quarantined = new AtomicLong();
    final AtomicLong compensated = new AtomicLong();
    final AtomicLong claimed = new AtomicLong();
    final AtomicLong databaseRetries = new AtomicLong();
    final AtomicLong redisRetries = new AtomicLong();
    final AtomicLong fenced = new AtomicLong();
    final AtomicLong trimmed = new AtomicLong();

    /** The counters in the order of the consumer's public statistics: batches, applied, redelivered, quarantined,
     * compensated, claimed, database retries, Redis retries, fenced, trimmed. */
    public long[] snapshot() {
        return new long[]{batches.get(), applied.get(), redelivered.get(), quarantined.get(), compensated.get(),
                claimed.get(), databaseRetries.get(), redisRetries.get(), fenced.get(), trimmed.get()};
    }
}
