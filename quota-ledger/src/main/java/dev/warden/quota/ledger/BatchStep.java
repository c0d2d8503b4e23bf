package dev.warden.quota.ledger;

import dev.warden.quota.EntryKind;
import dev.warden.quota.ledger.internal.EntryId;

import java.time.Instant;
import java.util.Optional;

/**
 * One journal message of a batch on its way into the ledger: where it came from, what it decodes to
 * (null when it does not), and what the writer does with it. {@link BatchClassifier} decides the
 * action; the writer may turn it into a quarantine when the database refuses the entry.
 *
 * <p>Not thread-safe: one batch's steps live on the consumer's thread.
 */
final class BatchStep {

    /** What the writer does with the entry. */
    enum Action {
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

    final BatchWriter.Part part;
    final BatchWriter.Raw raw;
    final EntryId position;
    final JournalEntry entry;
    Action action;
    QuarantineReason reason;
    String detail;

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

    String compensationRequestId() {
        return "ledger-comp-" + entry.partition() + "-" + entry.entryId();
    }

    EntryKind compensationKind() {
        return entry.kind() == EntryKind.DEDUCT ? EntryKind.REFUND : EntryKind.DEDUCT;
    }

    QuarantinedEntry quarantined() {
        return new QuarantinedEntry(part.stream(), raw.id(), raw.fields(), reason, detail, Instant.now(), Optional.empty());
    }
}
