package dev.warden.quota.ledger.consume;

import dev.warden.quota.ledger.journal.Compensation;
import dev.warden.quota.ledger.journal.QuarantinedEntry;

import java.time.Duration;

/**
 * Metrics and alerting hooks of the {@link dev.warden.quota.ledger.LedgerConsumer}, so the ledger needs no metrics library
 * (bridge these to Micrometer or logs). Called on the consumer's thread: return quickly. An exception
 * thrown by a hook is logged and ignored. Every method has an empty default.
 */
public interface LedgerListener {

    /** One batch of one partition committed to the database and acknowledged in Redis. */
    default void batchCommitted(Batch batch) {
    }

    /** An entry the database refused was stored in quarantine (and will be acknowledged). */
    default void quarantined(QuarantinedEntry entry) {
    }

    /** A replayed request id was compensated in Redis (or the compensation was refused: see {@link Compensation#done()}). */
    default void compensated(Compensation compensation) {
    }

    /** Periodically, per partition: entries delivered but not acknowledged, and entries not yet delivered. */
    default void lag(int partition, long pending, long undelivered) {
    }

    /** The database failed; the batch is retried after {@code retryIn}, and kept pending in Redis meanwhile. */
    default void databaseUnavailable(Throwable cause, Duration retryIn) {
    }

    /** Redis failed; the consumer tries again after {@code retryIn}. */
    default void redisUnavailable(Throwable cause, Duration retryIn) {
    }

    /** This consumer took a partition: its lock's lease, with {@code token}, is recorded in the database. */
    default void partitionTaken(int partition, long token) {
    }

    /** This consumer's lease on a partition ended (expired, taken over, or the lock client closed). */
    default void partitionLost(int partition) {
    }

    /**
     * The database refused this consumer's batch (or claim) of a partition: a newer owner recorded a
     * higher fencing token. Nothing of the batch was written; the entries stay pending for the owner.
     */
    default void fenced(int partition, long token) {
    }

    /**
     * What one batch did.
     *
     * @param partition   the partition
     * @param entries     entries in the batch
     * @param applied     entries applied to balances for the first time (compensated replays included)
     * @param redelivered entries the database already held (a redelivery after a crash): no-ops
     * @param quarantined entries refused and stored in quarantine
     * @param compensated replays compensated in Redis
     * @param claimed     whether the batch was claimed back from another consumer
     * @param took        from the first SQL statement to the acknowledgement
     */
    record Batch(int partition, int entries, int applied, int redelivered, int quarantined, int compensated,
                 boolean claimed, Duration took) {
    }
}
