package dev.warden.quota.ledger.internal.store;

import dev.warden.quota.ledger.internal.journal.EntryId;
import dev.warden.quota.ledger.journal.QuarantineReason;

import java.util.Map;

/**
 * A journal message the database refused, as {@code ledger_quarantine} stores it: the fields exactly as
 * Redis held them (they may not decode), where they came from, and why.
 */
public record QuarantineRow(String stream, String entryId, EntryId position, Map<String, String> fields,
                            QuarantineReason reason, String detail) {
}
