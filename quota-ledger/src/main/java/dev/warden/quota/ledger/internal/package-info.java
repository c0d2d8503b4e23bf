/**
 * The ledger's side of the journal streams in Redis: {@link JournalStreams} is their protocol in one
 * place (the consumer group, reads, claims, acknowledgement with trimming, and the reads that
 * reconciliation and the backlog need), {@link EntryId} a stream entry id, and {@link LedgerScripts}
 * the ledger's own Lua scripts. The loop, the policies and the lifecycle are in
 * {@link dev.warden.quota.ledger.LedgerConsumer} and {@link dev.warden.quota.ledger.Reconciler}.
 * Internal to Warden: no compatibility promise.
 */
package dev.warden.quota.ledger.internal;
