package dev.warden.quota.ledger.internal.consume;

import dev.warden.quota.EntryKind;
import dev.warden.quota.ledger.internal.journal.EntryId;
import dev.warden.quota.ledger.internal.store.CompensationRow;
import dev.warden.quota.ledger.internal.store.QuarantineRow;
import dev.warden.quota.ledger.journal.JournalEntry;
import dev.warden.quota.ledger.journal.QuarantineReason;
import dev.warden.quota.ledger.journal.QuarantinedEntry;

import java.time.Instant;
import java.util.Optional;

/**
 * One journal message of a batch on its way into the ledger: where it came from, what it decodes to
 * (null when it does not), and what the writer does with it. {@link BatchClassifier} decides the
 * action; the writer may turn it into a quarantine when the database refuses the entry.
 *
 * <p>Not thread-safe: one batch's steps live on the consumer's thread.
 */
public final class BatchStep {

    /** What the writer does with the entry. */
    public enum Action {
        /** First time: insert the entry, apply it to the balance. */
        APPLY,
        /** The ledger already holds this very entry: a redelivery; nothing to write. */
        REDELIVERED,
        /** A second entry for a request id the ledger holds: apply it and compensate in Redis. */
        COMPENSATE,
        /** A replay already recorded by an earlier attempt: compensate in Redis again (idempotent). */
        COMPENSATE_AGAIN,
        /** Refused: store in quarantine. */
        QUARANTINE,
        /** Already in quarantine (an earlier attempt stored it but did not acknowledge it). */
        ALREADY_QUARANTINED
    }

    public final BatchWriter.Part part;
    public final BatchWriter.Raw raw;
    public final EntryId position;
    public final JournalEntry entry;
    Action action;
    public QuarantineReason reason;
    public String detail;

    BatchStep(BatchWriter.Part part, BatchWriter.Raw raw, EntryId position, JournalEntry entry) {
        this.part = part;
        this.raw = raw;
        this.position = position;
        this.entry = entry;
    }

    void quarantine(QuarantineReason reason, String detail) {
        this.action = Action.QUARANTINE;
        this.reason = reason;
        this.detail = detail;
    }

    public String compensationRequestId() {
        return "ledger-comp-" + entry.partition() + "-" + entry.entryId();
    }

    public EntryKind compensationKind() {
        return entry.kind() == EntryKind.DEDUCT ? EntryKind.REFUND : EntryKind.DEDUCT;
    }

    /** The compensation row of a replay: what the store records before Redis is asked to undo it. */
    CompensationRow compensationRow() {
        return new CompensationRow(entry, position, compensationRequestId(), compensationKind());
    }

    /** The quarantine row: the message exactly as Redis held it, and why it was refused. */
    QuarantineRow quarantineRow() {
        return new QuarantineRow(part.stream(), raw.id(), position, raw.fields(), reason, detail);
    }

    QuarantinedEntry quarantined() {
        return new QuarantinedEntry(part.stream(), raw.id(), raw.fields(), reason, detail, Instant.now(), Optional.empty());
    }
}
