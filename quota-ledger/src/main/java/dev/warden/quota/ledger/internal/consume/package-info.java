/**
 * The journal consumer's machinery: partition ownership through Warden locks
 * ({@link dev.warden.quota.ledger.internal.consume.PartitionOwnership}), the loop and its pacing,
 * a batch read, classified, written under the fence and acknowledged
 * ({@link dev.warden.quota.ledger.internal.consume.BatchProcessor},
 * {@link dev.warden.quota.ledger.internal.consume.BatchClassifier},
 * {@link dev.warden.quota.ledger.internal.consume.BatchWriter} with its two paths,
 * {@code NetWrite} and
 * {@code EntryByEntryWrite}), and replays compensated in Redis
 * ({@link dev.warden.quota.ledger.internal.consume.Compensations}). The lifecycle is
 * {@link dev.warden.quota.ledger.LedgerConsumer}'s. Internal to Warden: no compatibility promise.
 */
package dev.warden.quota.ledger.internal.consume;
