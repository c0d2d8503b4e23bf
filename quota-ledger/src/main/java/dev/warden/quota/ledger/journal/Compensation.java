package dev.warden.quota.ledger.journal;

import dev.warden.quota.EntryKind;

import java.util.Objects;

/**
 * A retry that reached Redis after its idempotency record expired was applied a second time, so its
 * request id came through the journal twice. The ledger applies the replay like Redis did, then undoes
 * it in Redis under a derived request id: a refund for a deduction, a deduction for a top-up or refund.
 * That compensation is journaled and reaches the ledger as an ordinary entry, so both sides end where
 * the first application left them.
 *
 * @param replay                the second entry for the request id
 * @param compensationRequestId the derived request id: {@code ledger-comp-<partition>-<entryId>}
 * @param compensationKind      {@link EntryKind#REFUND} or {@link EntryKind#DEDUCT}
 * @param outcome               what Redis answered ({@code APPLIED}, {@code DUPLICATE} when it had already
 *                              been done, or a refusal such as {@code INSUFFICIENT})
 */
public record Compensation(JournalEntry replay, String compensationRequestId, EntryKind compensationKind,
                           String outcome) {

    public Compensation {
        Objects.requireNonNull(replay, "replay");
        Objects.requireNonNull(compensationRequestId, "compensationRequestId");
        Objects.requireNonNull(compensationKind, "compensationKind");
        Objects.requireNonNull(outcome, "outcome");
    }

    /** Whether Redis now holds the compensation (applied now or before). */
    public boolean done() {
        return outcome.equals("APPLIED") || outcome.equals("DUPLICATE");
    }
}
