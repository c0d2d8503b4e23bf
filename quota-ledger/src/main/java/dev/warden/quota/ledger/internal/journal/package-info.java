/**
 * The journal streams in Redis as the ledger reads them: {@link dev.warden.quota.ledger.internal.journal.JournalStreams}
 * is their protocol in one place (the consumer group, reads, claims, acknowledgement with trimming),
 * {@link dev.warden.quota.ledger.internal.journal.JournalTail} the entries past a point, decoded
 * ({@code JournalText} decodes the text of reads of new entries),
 * {@link dev.warden.quota.ledger.internal.journal.EntryId} a stream entry id and
 * {@link dev.warden.quota.ledger.internal.journal.LedgerScripts} the ledger's own Lua scripts.
 * The lowest floor of the ledger: it knows neither the database nor the consumer.
 * Internal to Warden: no compatibility promise.
 */
package dev.warden.quota.ledger.internal.journal;
