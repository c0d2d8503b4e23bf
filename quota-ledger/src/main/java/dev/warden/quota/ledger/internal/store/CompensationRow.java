package dev.warden.quota.ledger.internal.store;

import dev.warden.quota.EntryKind;
import dev.warden.quota.ledger.internal.journal.EntryId;
import dev.warden.quota.ledger.journal.JournalEntry;

/**
 * A replay to undo, as {@code ledger_compensations} stores it: the replayed entry, where it sits in its
 * stream, and the request id and kind of the compensating change Redis is asked for.
 */
public record CompensationRow(JournalEntry entry, EntryId position, String requestId, EntryKind kind) {
}
