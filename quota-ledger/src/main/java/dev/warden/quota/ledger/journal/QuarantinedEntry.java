package dev.warden.quota.ledger.journal;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * A journal entry the database refused, kept in {@code ledger_quarantine} until someone resolves it.
 * It was acknowledged in Redis only after it was stored, so it is never lost.
 *
 * @param stream        the journal stream
 * @param entryId       the stream entry id
 * @param fields        the entry's fields as Redis held them
 * @param reason        why it was refused
 * @param detail        the database's message, or what was wrong with the fields
 * @param quarantinedAt when it was stored (the consumer's clock for a fresh report)
 * @param resolvedAt    when someone marked it resolved, if anyone has
 */
public record QuarantinedEntry(String stream, String entryId, Map<String, String> fields, QuarantineReason reason,
                               String detail, Instant quarantinedAt, Optional<Instant> resolvedAt) {

    public QuarantinedEntry {
        Objects.requireNonNull(stream, "stream");
        Objects.requireNonNull(entryId, "entryId");
        fields = Map.copyOf(fields);
        Objects.requireNonNull(reason, "reason");
        Objects.requireNonNull(detail, "detail");
        Objects.requireNonNull(quarantinedAt, "quarantinedAt");
        Objects.requireNonNull(resolvedAt, "resolvedAt");
    }

    /** The account the entry names, as written (it may be malformed); empty string when missing. */
    public String account() {
        return fields.getOrDefault(JournalEntry.ACCOUNT, "");
    }
}
