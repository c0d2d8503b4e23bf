/**
 * Every statement the ledger sends to its database, over plain records: the schema and its migrations
 * ({@link dev.warden.quota.ledger.internal.store.Schema}), a batch's lookups and writes
 * ({@link dev.warden.quota.ledger.internal.store.LedgerSql}, {@link dev.warden.quota.ledger.internal.store.EntryRows},
 * {@link dev.warden.quota.ledger.internal.store.NetChanges}, {@link dev.warden.quota.ledger.internal.store.AccountRows},
 * {@link dev.warden.quota.ledger.internal.store.CompensationRows}), the partition fence
 * ({@link dev.warden.quota.ledger.internal.store.PartitionFence}) and the rows a person reviews
 * ({@link dev.warden.quota.ledger.internal.store.ReviewRows}). It decides nothing: what to write, and
 * when, is the consumer's. Internal to Warden: no compatibility promise.
 */
package dev.warden.quota.ledger.internal.store;
